#include "runner/scoped_interpreter.hpp"

#include <cstdio>
#include <mutex>

namespace gilhost {

namespace {
// The runtime pre-initialised as `python` does it (Py_BytesMain: PyPreConfig_InitPythonConfig), before
// anything else: Py_InitializeEx alone takes the "compat" pre-configuration, which ignores PYTHONUTF8 and
// neither coerces the C locale (PEP 538) nor turns UTF-8 mode on in it (PEP 540), so a script saw ASCII
// file names and streams under LC_ALL=C where `python` gives UTF-8. Py_InitializeEx keeps what is set
// here. It also sets LC_CTYPE before Py_DecodeLocale runs, which in the unset "C" locale probed mbstowcs
// byte by byte (233 -> 28 us on the development VM; the start-up as a whole the same within the spread).
std::string pre_initialize(const py::Api& api) {
  py::PyPreConfigStorage preconfig;
  api.PyPreConfig_InitPythonConfig(&preconfig);
  const py::PyStatus status = api.Py_PreInitialize(&preconfig);
  if (status.type == 0) return {};
  return std::string("Python pre-initialisation failed: ") + (status.err_msg ? status.err_msg : "unknown error");
}
}  // namespace

ScopedInterpreter::ScopedInterpreter(const py::Api& api, const std::string& executable)
    : api_(api), program_name_(nullptr, RawFree{&api}) {
  if (api.Py_SetProgramName) {
    error_ = pre_initialize(api);
    if (!error_.empty()) return;
    program_name_.reset(api.Py_DecodeLocale(executable.c_str(), nullptr));
    if (!program_name_) {
      error_ = "cannot decode the interpreter path " + executable;
      return;
    }
    api.Py_SetProgramName(program_name_.get());
    api.Py_InitializeEx(1);
    running_ = true;
    return;
  }
  // 3.15+ path (PEP 741). PyInitConfig starts from the isolated defaults; undo what `python` would not do.
  py::PyInitConfig* config = api.PyInitConfig_Create();
  if (!config) {
    error_ = "PyInitConfig_Create failed";
    return;
  }
  running_ = api.PyInitConfig_SetStr(config, "program_name", executable.c_str()) == 0 &&
             api.PyInitConfig_SetInt(config, "isolated", 0) == 0 &&
             api.PyInitConfig_SetInt(config, "use_environment", 1) == 0 &&
             api.PyInitConfig_SetInt(config, "user_site_directory", 1) == 0 &&
             api.PyInitConfig_SetInt(config, "install_signal_handlers", 1) == 0 &&
             api.Py_InitializeFromInitConfig(config) == 0;
  if (!running_) {
    const char* msg = nullptr;
    if (api.PyInitConfig_GetError) api.PyInitConfig_GetError(config, &msg);
    error_ = std::string("Python initialisation failed: ") + (msg ? msg : "unknown error");
  }
  api.PyInitConfig_Free(config);
}

ScopedInterpreter::~ScopedInterpreter() { finalize(); }

int ScopedInterpreter::finalize() {
  if (running_) {
    running_ = false;
    finalize_status_ = api_.Py_FinalizeEx();
  }
  return finalize_status_;
}

SubInterpreter::SubInterpreter(const py::Api& api, const py::PyInterpreterConfig& config, bool serialize_creation)
    : api_(api) {
  static std::mutex one_at_a_time;
  std::unique_lock<std::mutex> creating(one_at_a_time, std::defer_lock);
  if (serialize_creation) creating.lock();
  main_gilstate_ = api.PyGILState_Ensure();
  main_ = api.PyThreadState_Get();
  const py::PyStatus status = api.Py_NewInterpreterFromConfig(&sub_, &config);
  if (status.type != 0 || sub_ == nullptr) {
    sub_ = nullptr;
    error_ = std::string("Py_NewInterpreterFromConfig failed: ") + (status.err_msg ? status.err_msg : "?");
    api.PyThreadState_Swap(main_);
    api.PyGILState_Release(main_gilstate_);
  }
}

SubInterpreter::~SubInterpreter() {
  if (!sub_) return;
  api_.Py_EndInterpreter(sub_);            // leaves no current thread state
  api_.PyEval_RestoreThread(main_);        // re-attach to the main interpreter, taking its GIL
  api_.PyGILState_Release(main_gilstate_);
}

bool subinterpreter_creation_needs_lock(const char* py_version) {
  int major = 0, minor = 0;
  return py_version && std::sscanf(py_version, "%d.%d", &major, &minor) == 2 && major == 3 && minor == 12;
}

}  // namespace gilhost
