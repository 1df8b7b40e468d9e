#pragma once
// The bootstrap's `_compile_c(source: bytes, filename: str)`: a script's source compiled by the C API
// (Py_CompileStringObject), as `python script.py` compiles its script, with the interpreter's -O level and
// no inherited future flags. The builtin compile() would be the same code, but its first call in a process
// makes the ast module's classes (PyAST_Check), 1.2-2.2 ms that `python` never spends on a script.
#include "python/capi.hpp"

namespace gilhost {

// A new reference to the function, for the current interpreter (the GIL held); null with a Python error.
py::Ref script_compiler(const py::Api& api);

// The bootstrap's `_read_pyc_c(source: bytes, pyc: bytes, magic: bytes)`: a script's cached bytecode as
// the import system's SourceFileLoader.get_code takes it from a timestamp pyc (the magic, flags 0, the
// source's mtime as `int(os.stat(source).st_mtime)` and its size, each mod 2**32), unmarshalled; None for
// anything else (no pyc, a stale, hash-based or corrupt one), which the loader then handles as it does.
// Read in C, ~0.07 ms a run less than the loader's Python frames and file object. A new reference.
py::Ref pyc_reader(const py::Api& api);

}  // namespace gilhost
