#include "runner/bootstrap_code.hpp"

#include "util/clock.hpp"
#include "runner/bootstrap.hpp"
#include "runner/bootstrap_cache.hpp"

namespace gilhost {

namespace {
constexpr const char* kFilename = "<gilhost-bootstrap>";

// marshal.dumps(code) at this build's own format version (4 up to 3.13, 5 in 3.14).
std::string marshal_code(const py::Api& api, py::PyObject* code) {
  py::Ref marshal(api, api.PyImport_ImportModule("marshal"));
  py::Ref version(api, marshal ? api.PyObject_GetAttrString(marshal.get(), "version") : nullptr);
  const long v = version ? api.PyLong_AsLong(version.get()) : -1;
  py::Ref bytes(api, v >= 0 ? api.PyMarshal_WriteObjectToString(code, static_cast<int>(v)) : nullptr);
  char* data = nullptr;
  std::ptrdiff_t size = 0;
  if (!bytes || api.PyBytes_AsStringAndSize(bytes.get(), &data, &size) != 0) {
    api.PyErr_Clear();
    return {};
  }
  return std::string(data, static_cast<std::size_t>(size));
}

py::Ref compile_text(const py::Api& api, const std::string& text) {
  return py::Ref(api, api.Py_CompileStringExFlags(text.c_str(), kFilename, py::kFileInput, nullptr, -1));
}

// `data` as a Python bytes literal.
std::string bytes_literal(std::string_view data) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "b'";
  out.reserve(data.size() * 4 + 3);
  for (const char c : data) {
    const auto b = static_cast<unsigned char>(c);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out + "'";
}

// The code the runner runs: the bootstrap's hot part, with its cold part compiled, marshalled and bound to
// `_cold_code` (runner/bootstrap.hpp): unmarshalling the whole was the largest of the runner's own steps
// (~0.2 ms a run on 3.14.7, and making the cold part's class ~0.03 ms more). Where that cannot be made,
// the whole source, cold part and all.
py::Ref compile_source(const py::Api& api) {
  const BootstrapParts parts = bootstrap_parts();
  const py::Ref cold = parts.cold.empty() ? py::Ref() : compile_text(api, parts.cold);
  const std::string cold_code = cold ? marshal_code(api, cold.get()) : std::string();
  if (cold_code.empty()) {
    api.PyErr_Clear();
    return compile_text(api, bootstrap_source());
  }
  return compile_text(api, parts.hot + "_cold_code = " + bytes_literal(cold_code) + "\n");
}
}  // namespace

BootstrapCode BootstrapCode::prepare(const py::Api& api, const std::string& cache_dir) {
  const std::int64_t t0 = monotonic_ns();
  BootstrapCode out;
  const std::string version = api.Py_GetVersion();
  const std::string path = cache_dir.empty() ? std::string() : bootstrap_cache_path(cache_dir, version);
  if (!path.empty()) {
    out.cached_ = read_bootstrap_cache(path, version);
  }
  if (!out.cached_) {
    py::Ref code = compile_source(api);
    if (code) {
      out.compiled_ = marshal_code(api, code.get());
      if (!path.empty() && !out.compiled_.empty()) write_bootstrap_cache(path, version, out.compiled_);
    } else {
      api.PyErr_Clear();  // exec_in compiles again and reports the error where it can be printed
    }
  }
  out.prepare_ns_ = monotonic_ns() - t0;
  return out;
}

bool BootstrapCode::exec_in(const py::Api& api, py::PyObject* ns) const {
  py::Ref code;
  const std::string_view bytes = marshalled();
  if (!bytes.empty())
    code = py::Ref(api, api.PyMarshal_ReadObjectFromString(bytes.data(), static_cast<std::ptrdiff_t>(bytes.size())));
  if (!code) {
    api.PyErr_Clear();
    code = compile_source(api);
  }
  if (!code) return false;
  return py::Ref(api, api.PyEval_EvalCode(code.get(), ns, ns)).get() != nullptr;
}

}  // namespace gilhost
