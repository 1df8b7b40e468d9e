#pragma once
// The runner's interpreters as scoped objects, as pybind11 holds them (embed.h's scoped_interpreter,
// subinterpreter.h's subinterpreter and subinterpreter_scoped_activate), through the dlsym'd C API.
#include <memory>
#include <string>

#include "python/capi.hpp"

namespace gilhost {

// The embedded main interpreter: initialised by the constructor as `python` is (program name set to the
// real interpreter, so sys.executable, sys.prefix and the module search path are its own; signal
// handlers installed), finalised by finalize() (timed by the caller) or else by the destructor.
// Paths that end the runner with std::exit (a failure) skip both on purpose: finalising a runtime in an
// unknown state can hang, and the process is ending.
class ScopedInterpreter {
 public:
  ScopedInterpreter(const py::Api& api, const std::string& executable);
  ScopedInterpreter(const ScopedInterpreter&) = delete;
  ScopedInterpreter& operator=(const ScopedInterpreter&) = delete;
  ~ScopedInterpreter();

  bool ok() const { return running_; }
  const std::string& error() const { return error_; }
  // Py_FinalizeEx's status (-1: flushing the standard streams failed); only the first call finalises.
  int finalize();

 private:
  struct RawFree {
    const py::Api* api;
    void operator()(wchar_t* p) const { api->PyMem_RawFree(p); }
  };
  const py::Api& api_;
  // Py_SetProgramName keeps the pointer: the decoded name must outlive the interpreter.
  std::unique_ptr<wchar_t, RawFree> program_name_;
  bool running_ = false;
  int finalize_status_ = 0;
  std::string error_;
};

// One subinterpreter, made and ended on one thread: from construction to destruction it is this thread's
// current interpreter, with its GIL held (release it with py::GilRelease around waits). The constructor
// attaches to the main interpreter (Py_NewInterpreterFromConfig needs a current thread state), creates
// the interpreter, and leaves it current; the destructor ends it (Py_EndInterpreter) and detaches from
// the main interpreter again. Nothing needs the main interpreter's GIL to be held on entry.
//
// On 3.12 creations are serialized (`serialize_creation`): CPython 3.12 crashes when interpreters are
// created concurrently (several of its modules initialise shared state unsafely; pybind11 takes the
// same lock). The lock is taken before attaching to the main interpreter, so a thread waiting for it
// never holds the main GIL another creation may need.
class SubInterpreter {
 public:
  SubInterpreter(const py::Api& api, const py::PyInterpreterConfig& config, bool serialize_creation);
  SubInterpreter(const SubInterpreter&) = delete;
  SubInterpreter& operator=(const SubInterpreter&) = delete;
  ~SubInterpreter();

  explicit operator bool() const { return sub_ != nullptr; }
  const std::string& error() const { return error_; }

 private:
  const py::Api& api_;
  py::PyGILState_STATE main_gilstate_ = 0;
  py::PyThreadState* main_ = nullptr;  // this thread's state in the main interpreter, to go back to
  py::PyThreadState* sub_ = nullptr;
  std::string error_;
};

// Whether this build needs its subinterpreter creations serialized: 3.12, from Py_GetVersion()'s text.
bool subinterpreter_creation_needs_lock(const char* py_version);

}  // namespace gilhost
