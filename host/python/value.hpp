#pragma once
// A JSON value as the equal Python object, built with the C API: the runner's spec becomes the bootstrap's
// `_spec` dict this way, not as source text to compile (the first compile() in a fresh interpreter costs
// 0.3-2 ms, which `python -c pass` does not pay twice; docs/performance.md).
#include <nlohmann/json.hpp>

#include "python/capi.hpp"

namespace gilhost::py {

// null, booleans, integers (64-bit, signed or not), doubles (NaN and infinities included), strings (NUL
// included), arrays as lists, objects as dicts with str keys. An empty Ref, with a Python exception set,
// where the interpreter could not make an object (out of memory). The GIL must be held.
Ref to_python(const Api& api, const nlohmann::json& value);

}  // namespace gilhost::py
