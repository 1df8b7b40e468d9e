#include "runner/interpreter_session.hpp"

#include "runner/bootstrap.hpp"

namespace gilhost {

bool initialize_python(const py::Api& api, const std::string& executable, std::string& error) {
  if (api.Py_SetProgramName) {
    // Py_SetProgramName keeps the pointer: the decoded string must outlive the interpreter.
    static wchar_t* program = nullptr;
    program = api.Py_DecodeLocale(executable.c_str(), nullptr);
    if (!program) {
      error = "cannot decode the interpreter path " + executable;
      return false;
    }
    api.Py_SetProgramName(program);
    api.Py_InitializeEx(1);
    return true;
  }
  // 3.15+ path (PEP 741). PyInitConfig starts from the isolated defaults; undo what `python` would not do.
  py::PyInitConfig* config = api.PyInitConfig_Create();
  if (!config) {
    error = "PyInitConfig_Create failed";
    return false;
  }
  bool ok = api.PyInitConfig_SetStr(config, "program_name", executable.c_str()) == 0 &&
            api.PyInitConfig_SetInt(config, "isolated", 0) == 0 &&
            api.PyInitConfig_SetInt(config, "use_environment", 1) == 0 &&
            api.PyInitConfig_SetInt(config, "user_site_directory", 1) == 0 &&
            api.PyInitConfig_SetInt(config, "install_signal_handlers", 1) == 0 &&
            api.Py_InitializeFromInitConfig(config) == 0;
  if (!ok) {
    const char* msg = nullptr;
    if (api.PyInitConfig_GetError) api.PyInitConfig_GetError(config, &msg);
    error = std::string("Python initialisation failed: ") + (msg ? msg : "unknown error");
  }
  api.PyInitConfig_Free(config);
  return ok;
}

std::optional<bool> gil_enabled_now(const py::Api& api) {
  py::Ref ns(api, api.PyDict_New());
  if (ns && api.PyDict_SetItemString(ns.get(), "__builtins__", api.PyEval_GetBuiltins()) == 0) {
    py::Ref on(api, api.PyRun_StringFlags("int(getattr(__import__('sys'), '_is_gil_enabled', lambda: True)())",
                                          py::kEvalInput, ns.get(), ns.get(), nullptr));
    if (on) return api.PyLong_AsLong(on.get()) != 0;
  }
  api.PyErr_Clear();
  return std::nullopt;
}

Bootstrap::Bootstrap(const py::Api& api, const RunnerSpec& spec, int index, const BootstrapCode& code) : api_(api) {
  ns_ = py::Ref(api, api.PyDict_New());
  if (!ns_ || api.PyDict_SetItemString(ns_.get(), "__builtins__", api.PyEval_GetBuiltins()) != 0) {
    error_ = "cannot create the bootstrap namespace";
    return;
  }
  // `_spec` first (a literal: quick to compile), then the bootstrap's code, which reads it.
  const std::string spec_line = spec_statement(spec.python_spec(index));
  py::Ref defined(api, api.PyRun_StringFlags(spec_line.c_str(), py::kFileInput, ns_.get(), ns_.get(), nullptr));
  if (!defined || !code.exec_in(api, ns_.get())) {
    api.PyErr_Print();
    error_ = "the runner's bootstrap failed in this interpreter (traceback on stderr)";
    return;
  }
  ok_ = true;
}

bool Bootstrap::call(const char* phase) {
  py::PyObject* fn = api_.PyDict_GetItemString(ns_.get(), phase);  // borrowed
  if (!fn) return false;
  py::Ref r(api_, api_.PyObject_CallObject(fn, nullptr));
  if (!r) {
    api_.PyErr_Print();
    return false;
  }
  return true;
}

std::string Bootstrap::finish() {
  py::PyObject* fn = api_.PyDict_GetItemString(ns_.get(), "_finish");
  if (!fn) return {};
  py::Ref r(api_, api_.PyObject_CallObject(fn, nullptr));
  if (!r) {
    api_.PyErr_Print();
    return {};
  }
  const char* s = api_.PyUnicode_AsUTF8(r.get());
  return s ? std::string(s) : std::string();
}

}  // namespace gilhost
