#include "runner/interpreter_session.hpp"

#include <cstring>

#include "python/value.hpp"
#include "runner/bootstrap.hpp"
#include "runner/script_compiler.hpp"

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

namespace {
// The gc module, made by `_imp` as the import system makes a built-in module but without the import
// system's Python code (`import gc` was 42 us of every run: start-up does not import gc) and without
// putting it in sys.modules, so the script finds sys.modules as `python` leaves it. 3.9's gc is a
// single-phase module, which `_imp` would put there with no __spec__: imported there, as before.
py::Ref gc_module(const py::Api& api) {
  if (std::strncmp(api.Py_GetVersion(), "3.9.", 4) == 0) return py::Ref(api, api.PyImport_ImportModule("gc"));
  auto attr = [&](const py::Ref& of, const char* name) {
    return py::Ref(api, of ? api.PyObject_GetAttrString(of.get(), name) : nullptr);
  };
  auto call = [&](const py::Ref& fn, const py::Ref& args) {
    return py::Ref(api, fn && args ? api.PyObject_CallObject(fn.get(), args.get()) : nullptr);
  };
  const py::Ref imp(api, api.PyImport_ImportModule("_imp"));  // imported at start-up: a lookup
  const py::Ref importlib(api, api.PyImport_ImportModule("_frozen_importlib"));
  const py::Ref spec = call(attr(importlib, "ModuleSpec"), py::Ref(api, api.Py_BuildValue("(sz)", "gc", nullptr)));
  py::Ref gc = call(attr(imp, "create_builtin"), py::Ref(api, spec ? api.Py_BuildValue("(O)", spec.get()) : nullptr));
  const py::Ref done = call(attr(imp, "exec_builtin"), py::Ref(api, gc ? api.Py_BuildValue("(O)", gc.get()) : nullptr));
  if (done) return gc;
  api.PyErr_Clear();
  return py::Ref(api, api.PyImport_ImportModule("gc"));
}

// The objects the bootstrap makes (its code, functions and spec: about 120 containers) must not bring
// forward a garbage collection that `python script.py` would not have made. Start-up leaves the young
// generation close to its threshold on some builds (3.14.7: 1,941 of 2,000; 3.9 and 3.12 within 130 of
// 700), and the bootstrap tipped it over: a young collection of every object start-up made, 0.2-0.3 ms of
// each run (docs/performance.md). gc.freeze() then gc.unfreeze() moves those objects to the oldest
// generation unexamined (a collection here would find them all alive) and sets the counts to zero, so the
// script's import and the case start from a young generation as empty as that collection would have left
// it. They stay collectable. A free-threaded build is left alone: its freeze walks the whole heap (0.1 ms)
// and keeps the count, and its start-up leaves it far from the threshold (3.14.7t: 1,063 of 2,000).
void start_gc_counts_afresh(const py::Api& api, bool free_threaded) {
  if (free_threaded) return;
  const py::Ref gc = gc_module(api);
  for (const char* step : {"freeze", "unfreeze"}) {
    py::Ref fn(api, gc ? api.PyObject_GetAttrString(gc.get(), step) : nullptr);
    py::Ref done(api, fn ? api.PyObject_CallObject(fn.get(), nullptr) : nullptr);
    if (!done) break;
  }
  api.PyErr_Clear();  // an interpreter without them still runs the case, as before
}
}  // namespace

Bootstrap::Bootstrap(const py::Api& api, const RunnerSpec& spec, int index, const BootstrapCode& code) : api_(api) {
  start_gc_counts_afresh(api, spec.free_threaded);
  ns_ = py::Ref(api, api.PyDict_New());
  if (!ns_ || api.PyDict_SetItemString(ns_.get(), "__builtins__", api.PyEval_GetBuiltins()) != 0) {
    error_ = "cannot create the bootstrap namespace";
    return;
  }
  // `_spec` first, built as objects (nothing to compile), and the compiler for the script; then the
  // bootstrap's code, which reads them.
  const py::Ref spec_dict = py::to_python(api, spec.python_spec(index));
  const py::Ref compiler = script_compiler(api), pyc = pyc_reader(api);
  if (!spec_dict || !compiler || !pyc || api.PyDict_SetItemString(ns_.get(), "_spec", spec_dict.get()) != 0 ||
      api.PyDict_SetItemString(ns_.get(), "_compile_c", compiler.get()) != 0 ||
      api.PyDict_SetItemString(ns_.get(), "_read_pyc_c", pyc.get()) != 0 || !code.exec_in(api, ns_.get())) {
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

namespace {
// _state[key] of the bootstrap's namespace `ns` (borrowed), or nullptr.
py::PyObject* state_item(const py::Api& api, py::PyObject* ns, const char* key) {
  py::PyObject* state = ns ? api.PyDict_GetItemString(ns, "_state") : nullptr;
  return state ? api.PyDict_GetItemString(state, key) : nullptr;
}
}  // namespace

std::int64_t Bootstrap::exit_code() const {
  py::PyObject* code = state_item(api_, ns_.get(), "exit_code");
  const long v = code ? api_.PyLong_AsLong(code) : 1;
  if (v == -1 && api_.PyErr_Occurred()) api_.PyErr_Clear();
  return v;
}

std::optional<bool> Bootstrap::gil_enabled_after() const {
  py::PyObject* on = state_item(api_, ns_.get(), "gil_enabled_after");
  if (!on) return std::nullopt;
  const long v = api_.PyLong_AsLong(on);  // a bool is an int
  if (v == -1 && api_.PyErr_Occurred()) {
    api_.PyErr_Clear();
    return std::nullopt;
  }
  return v != 0;
}

}  // namespace gilhost
