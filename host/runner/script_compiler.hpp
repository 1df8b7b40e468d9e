#pragma once
// The bootstrap's `_compile_c(source: bytes, filename: str)`: a script's source compiled by the C API
// (Py_CompileStringObject), as `python script.py` compiles its script, with the interpreter's -O level and
// no inherited future flags. The builtin compile() would be the same code, but its first call in a process
// makes the ast module's classes (PyAST_Check), 1.2-2.2 ms that `python` never spends on a script.
#include "python/capi.hpp"

namespace gilhost {

// A new reference to the function, for the current interpreter (the GIL held); null with a Python error.
py::Ref script_compiler(const py::Api& api);

}  // namespace gilhost
