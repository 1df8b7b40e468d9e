#pragma once
// The part of CPython's C API the runner uses, resolved at run time with dlsym.
//
// Only exported functions and opaque pointers: no object-layout macro (Py_INCREF, Py_TYPE, ...) is used,
// so the same code is correct on GIL and free-threaded builds, whose PyObject headers differ.
// The two plain structs below are declared from CPython's own headers (Include/cpython/initconfig.h,
// Include/cpython/pylifecycle.h); their layout is the same in 3.8–3.14.
#include <cstddef>
#include <string>

#include "python/library.hpp"

namespace gilhost::py {

struct PyObject;       // opaque
struct PyThreadState;  // opaque
struct PyInterpreterState;  // opaque
struct PyInitConfig;   // opaque (3.14+, PEP 741)
using PyGILState_STATE = int;

struct PyStatus {
  int type;  // 0 ok, 1 error, 2 exit
  const char* func;
  const char* err_msg;
  int exitcode;
};

// 3.12+: Include/cpython/pylifecycle.h
struct PyInterpreterConfig {
  int use_main_obmalloc;
  int allow_fork;
  int allow_exec;
  int allow_threads;
  int allow_daemon_threads;
  int check_multi_interp_extensions;
  int gil;  // 0 default, 1 shared, 2 own
};
// PyPreConfig (Include/cpython/initconfig.h): ten ints in 3.8-3.14 on Linux. Only CPython's own
// functions fill and read it, so the runner holds it as room enough for any of them.
struct PyPreConfigStorage {
  alignas(8) unsigned char bytes[256] = {};
};
// PyMethodDef (Include/methodobject.h), the same since Python 2: a C function for Python to call.
using PyCFunction = PyObject* (*)(PyObject* self, PyObject* args);
struct PyMethodDef {
  const char* ml_name;
  PyCFunction ml_meth;
  int ml_flags;
  const char* ml_doc;
};
constexpr int kMethVarargs = 0x0001;  // METH_VARARGS
constexpr int kSharedGil = 1;
constexpr int kOwnGil = 2;
constexpr int kFileInput = 257;  // Py_file_input
constexpr int kEvalInput = 258;  // Py_eval_input

struct Api {
  // Life cycle.
  void (*Py_InitializeEx)(int) = nullptr;
  int (*Py_FinalizeEx)() = nullptr;
  wchar_t* (*Py_DecodeLocale)(const char*, std::size_t*) = nullptr;
  void (*PyMem_RawFree)(void*) = nullptr;
  // Pre-initialisation as `python` makes it (3.8+): the locale, C-locale coercion and UTF-8 mode.
  void (*PyPreConfig_InitPythonConfig)(PyPreConfigStorage*) = nullptr;
  PyStatus (*Py_PreInitialize)(const PyPreConfigStorage*) = nullptr;
  // Program name before 3.14 (deprecated there, so preferred only when PyInitConfig is absent).
  void (*Py_SetProgramName)(const wchar_t*) = nullptr;
  // PEP 741 (3.14+): opaque configuration, exported functions only.
  PyInitConfig* (*PyInitConfig_Create)() = nullptr;
  void (*PyInitConfig_Free)(PyInitConfig*) = nullptr;
  int (*PyInitConfig_SetStr)(PyInitConfig*, const char*, const char*) = nullptr;
  int (*PyInitConfig_SetInt)(PyInitConfig*, const char*, long long) = nullptr;
  int (*PyInitConfig_GetError)(PyInitConfig*, const char**) = nullptr;
  int (*Py_InitializeFromInitConfig)(PyInitConfig*) = nullptr;

  // Objects (all through functions, never macros).
  void (*Py_DecRef)(PyObject*) = nullptr;
  PyObject* (*PyDict_New)() = nullptr;
  int (*PyDict_SetItemString)(PyObject*, const char*, PyObject*) = nullptr;
  PyObject* (*PyDict_GetItemString)(PyObject*, const char*) = nullptr;  // borrowed
  PyObject* (*PyEval_GetBuiltins)() = nullptr;                          // borrowed
  PyObject* (*PyUnicode_FromString)(const char*) = nullptr;
  // Building values (python/value: the runner's spec as a dict, with no compiler involved).
  PyObject* (*PyUnicode_FromStringAndSize)(const char*, std::ptrdiff_t) = nullptr;
  PyObject* (*PyLong_FromLongLong)(long long) = nullptr;
  PyObject* (*PyLong_FromUnsignedLongLong)(unsigned long long) = nullptr;
  PyObject* (*PyFloat_FromDouble)(double) = nullptr;
  PyObject* (*PyBool_FromLong)(long) = nullptr;
  PyObject* (*PyList_New)(std::ptrdiff_t) = nullptr;
  int (*PyList_Append)(PyObject*, PyObject*) = nullptr;
  int (*PyDict_SetItem)(PyObject*, PyObject*, PyObject*) = nullptr;
  PyObject* (*Py_BuildValue)(const char*, ...) = nullptr;  // only as Py_BuildValue(""): a new reference to None
  const char* (*PyUnicode_AsUTF8)(PyObject*) = nullptr;
  PyObject* (*PyObject_CallObject)(PyObject*, PyObject*) = nullptr;
  PyObject* (*PyRun_StringFlags)(const char*, int, PyObject*, PyObject*, void*) = nullptr;
  PyObject* (*PyErr_Occurred)() = nullptr;
  void (*PyErr_Print)() = nullptr;
  void (*PyErr_Clear)() = nullptr;
  PyObject* (*PyImport_ImportModule)(const char*) = nullptr;
  PyObject* (*PyObject_GetAttrString)(PyObject*, const char*) = nullptr;
  long (*PyLong_AsLong)(PyObject*) = nullptr;
  int (*PyBytes_AsStringAndSize)(PyObject*, char**, std::ptrdiff_t*) = nullptr;
  const char* (*Py_GetVersion)() = nullptr;

  // Code: compiled once per build, then kept marshalled (runner/bootstrap_code).
  PyObject* (*Py_CompileStringExFlags)(const char*, const char*, int, void*, int) = nullptr;
  PyObject* (*PyEval_EvalCode)(PyObject*, PyObject*, PyObject*) = nullptr;
  // A script compiled as `python script.py` compiles it (runner/script_compiler).
  PyObject* (*Py_CompileStringObject)(const char*, PyObject*, int, void*, int) = nullptr;
  PyObject* (*PyCFunction_NewEx)(PyMethodDef*, PyObject*, PyObject*) = nullptr;
  PyObject* (*PyTuple_GetItem)(PyObject*, std::ptrdiff_t) = nullptr;  // borrowed
  PyObject* (*PyMarshal_ReadObjectFromString)(const char*, std::ptrdiff_t) = nullptr;
  PyObject* (*PyMarshal_WriteObjectToString)(PyObject*, int) = nullptr;

  // Threads and interpreters.
  PyThreadState* (*PyEval_SaveThread)() = nullptr;
  void (*PyEval_RestoreThread)(PyThreadState*) = nullptr;
  PyGILState_STATE (*PyGILState_Ensure)() = nullptr;
  void (*PyGILState_Release)(PyGILState_STATE) = nullptr;
  PyThreadState* (*PyThreadState_Get)() = nullptr;
  PyThreadState* (*PyThreadState_Swap)(PyThreadState*) = nullptr;
  void (*Py_EndInterpreter)(PyThreadState*) = nullptr;
  // A thread state of our own for an interpreter (runner/gil_locator); all exported since 3.9.
  PyInterpreterState* (*PyInterpreterState_Get)() = nullptr;
  PyThreadState* (*PyThreadState_New)(PyInterpreterState*) = nullptr;
  void (*PyThreadState_Clear)(PyThreadState*) = nullptr;
  void (*PyThreadState_DeleteCurrent)() = nullptr;
  // 3.12+; absent means no subinterpreters with their own GIL. Returns PyStatus by value.
  PyStatus (*Py_NewInterpreterFromConfig)(PyThreadState**, const PyInterpreterConfig*) = nullptr;
  // 3.8+: a C audit hook (runner/gil_locator: the interpreters a script makes). Optional.
  int (*PySys_AddAuditHook)(int (*)(const char*, PyObject*, void*), void*) = nullptr;

  // Resolves every symbol; false with `error` naming the first required one that is missing.
  bool load(const SharedLibrary& lib, std::string& error);
  bool has_subinterpreters() const { return Py_NewInterpreterFromConfig && Py_EndInterpreter; }
  bool has_thread_states() const {
    return PyInterpreterState_Get && PyThreadState_New && PyThreadState_Clear && PyThreadState_DeleteCurrent;
  }
};

// Owns one reference, released through Py_DecRef (the exported function, so layout-free).
class Ref {
 public:
  Ref() = default;
  Ref(const Api& api, PyObject* obj) : api_(&api), obj_(obj) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& o) noexcept : api_(o.api_), obj_(o.release()) {}
  Ref& operator=(Ref&& o) noexcept {
    if (this != &o) {
      reset();
      api_ = o.api_;
      obj_ = o.release();
    }
    return *this;
  }
  ~Ref() { reset(); }
  PyObject* get() const { return obj_; }
  explicit operator bool() const { return obj_ != nullptr; }
  PyObject* release() {
    PyObject* o = obj_;
    obj_ = nullptr;
    return o;
  }
  void reset() {
    if (obj_ && api_) api_->Py_DecRef(obj_);
    obj_ = nullptr;
  }

 private:
  const Api* api_ = nullptr;
  PyObject* obj_ = nullptr;
};

// Releases the GIL (PyEval_SaveThread) for its lifetime, like pybind11's gil_scoped_release.
class GilRelease {
 public:
  explicit GilRelease(const Api& api) : api_(api), state_(api.PyEval_SaveThread()) {}
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;
  ~GilRelease() { api_.PyEval_RestoreThread(state_); }

 private:
  const Api& api_;
  PyThreadState* state_;
};

// Attaches this OS thread to the main interpreter (PyGILState_Ensure) for its lifetime.
class GilAcquire {
 public:
  explicit GilAcquire(const Api& api) : api_(api), state_(api.PyGILState_Ensure()) {}
  GilAcquire(const GilAcquire&) = delete;
  GilAcquire& operator=(const GilAcquire&) = delete;
  ~GilAcquire() { api_.PyGILState_Release(state_); }

 private:
  const Api& api_;
  PyGILState_STATE state_;
};

}  // namespace gilhost::py
