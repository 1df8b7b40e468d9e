#include "runner/script_compiler.hpp"

#include <atomic>

namespace gilhost {

namespace {
// The runner's one Api (one libpython a process), for the C callback, which CPython calls with no room
// for it. Set before any function is made; every interpreter's function shares it.
std::atomic<const py::Api*> compiler_api{nullptr};

// (source: bytes, filename: str) -> code. The bootstrap's _compile hands it bytes with no NUL and a str,
// and takes the builtin for anything else; a wrong type here is a TypeError from CPython.
py::PyObject* compile_script(py::PyObject* /*self*/, py::PyObject* args) {
  const py::Api& api = *compiler_api.load(std::memory_order_acquire);
  py::PyObject* source = api.PyTuple_GetItem(args, 0);
  py::PyObject* filename = source ? api.PyTuple_GetItem(args, 1) : nullptr;
  char* text = nullptr;
  std::ptrdiff_t size = 0;
  if (!filename || api.PyBytes_AsStringAndSize(source, &text, &size) != 0) return nullptr;
  return api.Py_CompileStringObject(text, filename, py::kFileInput, nullptr, -1);
}

py::PyMethodDef compile_script_def{"_compile_c", &compile_script, py::kMethVarargs,
                                   "compile(source, filename, 'exec', dont_inherit=True) by the C API"};
}  // namespace

py::Ref script_compiler(const py::Api& api) {
  compiler_api.store(&api, std::memory_order_release);
  return py::Ref(api, api.PyCFunction_NewEx(&compile_script_def, nullptr, nullptr));
}

}  // namespace gilhost
