#include "python/capi.hpp"

namespace gilhost::py {

namespace {
template <typename Fn>
bool bind(const SharedLibrary& lib, Fn& slot, const char* name, bool required, std::string& error) {
  slot = reinterpret_cast<Fn>(lib.symbol(name));
  if (!slot && required && error.empty()) error = std::string("libpython lacks the symbol ") + name;
  return slot != nullptr || !required;
}
}  // namespace

bool Api::load(const SharedLibrary& lib, std::string& error) {
  error.clear();
  bool ok = true;
#define GILHOST_REQUIRED(name) ok &= bind(lib, name, #name, true, error)
#define GILHOST_OPTIONAL(name) bind(lib, name, #name, false, error)
  GILHOST_REQUIRED(Py_InitializeEx);
  GILHOST_REQUIRED(Py_FinalizeEx);
  GILHOST_REQUIRED(Py_DecodeLocale);
  GILHOST_REQUIRED(PyMem_RawFree);
  GILHOST_REQUIRED(PyPreConfig_InitPythonConfig);
  GILHOST_REQUIRED(Py_PreInitialize);
  GILHOST_OPTIONAL(Py_SetProgramName);
  GILHOST_OPTIONAL(PyInitConfig_Create);
  GILHOST_OPTIONAL(PyInitConfig_Free);
  GILHOST_OPTIONAL(PyInitConfig_SetStr);
  GILHOST_OPTIONAL(PyInitConfig_SetInt);
  GILHOST_OPTIONAL(PyInitConfig_GetError);
  GILHOST_OPTIONAL(Py_InitializeFromInitConfig);
  GILHOST_REQUIRED(Py_DecRef);
  GILHOST_REQUIRED(PyDict_New);
  GILHOST_REQUIRED(PyDict_SetItemString);
  GILHOST_REQUIRED(PyDict_GetItemString);
  GILHOST_REQUIRED(PyEval_GetBuiltins);
  GILHOST_REQUIRED(PyUnicode_FromString);
  GILHOST_REQUIRED(PyUnicode_FromStringAndSize);
  GILHOST_REQUIRED(PyLong_FromLongLong);
  GILHOST_REQUIRED(PyLong_FromUnsignedLongLong);
  GILHOST_REQUIRED(PyFloat_FromDouble);
  GILHOST_REQUIRED(PyBool_FromLong);
  GILHOST_REQUIRED(PyList_New);
  GILHOST_REQUIRED(PyList_Append);
  GILHOST_REQUIRED(PyDict_SetItem);
  GILHOST_REQUIRED(Py_BuildValue);
  GILHOST_REQUIRED(PyUnicode_AsUTF8);
  GILHOST_REQUIRED(PyObject_CallObject);
  GILHOST_REQUIRED(PyRun_StringFlags);
  GILHOST_REQUIRED(PyErr_Occurred);
  GILHOST_REQUIRED(PyErr_Print);
  GILHOST_REQUIRED(PyErr_Clear);
  GILHOST_REQUIRED(PyImport_ImportModule);
  GILHOST_REQUIRED(PyObject_GetAttrString);
  GILHOST_REQUIRED(PyLong_AsLong);
  GILHOST_REQUIRED(PyBytes_AsStringAndSize);
  GILHOST_REQUIRED(Py_GetVersion);
  GILHOST_REQUIRED(Py_CompileStringExFlags);
  GILHOST_REQUIRED(PyEval_EvalCode);
  GILHOST_REQUIRED(Py_CompileStringObject);
  GILHOST_REQUIRED(PyCFunction_NewEx);
  GILHOST_REQUIRED(PyTuple_GetItem);
  GILHOST_REQUIRED(PyMarshal_ReadObjectFromString);
  GILHOST_REQUIRED(PyMarshal_WriteObjectToString);
  GILHOST_REQUIRED(PyEval_SaveThread);
  GILHOST_REQUIRED(PyEval_RestoreThread);
  GILHOST_REQUIRED(PyGILState_Ensure);
  GILHOST_REQUIRED(PyGILState_Release);
  GILHOST_REQUIRED(PyThreadState_Get);
  GILHOST_REQUIRED(PyThreadState_Swap);
  GILHOST_OPTIONAL(Py_EndInterpreter);
  GILHOST_OPTIONAL(Py_NewInterpreterFromConfig);
  GILHOST_OPTIONAL(PySys_AddAuditHook);
  GILHOST_OPTIONAL(PyInterpreterState_Get);
  GILHOST_OPTIONAL(PyThreadState_New);
  GILHOST_OPTIONAL(PyThreadState_Clear);
  GILHOST_OPTIONAL(PyThreadState_DeleteCurrent);
#undef GILHOST_REQUIRED
#undef GILHOST_OPTIONAL
  if (!Py_SetProgramName && !(PyInitConfig_Create && Py_InitializeFromInitConfig)) {
    ok = false;
    if (error.empty()) error = "libpython has neither Py_SetProgramName nor the PyInitConfig API";
  }
  return ok;
}

}  // namespace gilhost::py
