#include "runner/interpreter_session.hpp"

#include "python/value.hpp"
#include "runner/bootstrap.hpp"

namespace gilhost {

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
  // `_spec` first, built as objects (nothing to compile), then the bootstrap's code, which reads it.
  const py::Ref spec_dict = py::to_python(api, spec.python_spec(index));
  if (!spec_dict || api.PyDict_SetItemString(ns_.get(), "_spec", spec_dict.get()) != 0 || !code.exec_in(api, ns_.get())) {
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
  if (!s) api_.PyErr_Print();  // the traceback the runner's message promises
  return s ? std::string(s) : std::string();
}

}  // namespace gilhost
