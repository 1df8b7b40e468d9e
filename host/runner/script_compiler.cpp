#include "runner/script_compiler.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "util/fd.hpp"

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

std::uint32_t le32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 | static_cast<std::uint32_t>(b[2]) << 16 |
         static_cast<std::uint32_t>(b[3]) << 24;
}

// The pyc at `path`, whole, if it is a regular file of a plausible size.
std::optional<std::string> read_small_file(const char* path) {
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 16 || st.st_size > (64 << 20))
    return std::nullopt;
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd.get(), &data[got], data.size() - got);
    if (n <= 0) return std::nullopt;  // an error, or the file shrank: the loader reads it again
    got += static_cast<std::size_t>(n);
  }
  return data;
}

// The pyc's payload if its header says it is this source's, as importlib's _classify_pyc and
// _validate_timestamp_pyc decide; nullopt otherwise.
std::optional<std::string> fresh_payload(const char* source, const char* pyc, const char* magic) {
  struct stat src {};
  if (::stat(source, &src) != 0 || src.st_mtim.tv_sec < 0) return std::nullopt;
  std::optional<std::string> data = read_small_file(pyc);
  if (!data || std::memcmp(data->data(), magic, 4) != 0 || le32(data->data() + 4) != 0) return std::nullopt;
  // st_mtime as Python makes it (seconds + nanoseconds * 1e-9, a double), then int(): the same rounding.
  const double mtime = static_cast<double>(src.st_mtim.tv_sec) + static_cast<double>(src.st_mtim.tv_nsec) * 1e-9;
  if (le32(data->data() + 8) != static_cast<std::uint32_t>(static_cast<std::int64_t>(mtime)) ||
      le32(data->data() + 12) != static_cast<std::uint32_t>(src.st_size))
    return std::nullopt;
  return data->substr(16);
}

// (source: bytes, pyc: bytes, magic: bytes) -> code | None
py::PyObject* read_pyc(py::PyObject* /*self*/, py::PyObject* args) {
  const py::Api& api = *compiler_api.load(std::memory_order_acquire);
  char* text[3] = {nullptr, nullptr, nullptr};
  std::ptrdiff_t size[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    py::PyObject* item = api.PyTuple_GetItem(args, i);
    if (!item || api.PyBytes_AsStringAndSize(item, &text[i], &size[i]) != 0) return nullptr;
    if (static_cast<std::size_t>(size[i]) != std::strlen(text[i])) return api.Py_BuildValue("");  // a NUL: not a path
  }
  if (size[2] != 4) return api.Py_BuildValue("");
  const std::optional<std::string> payload = fresh_payload(text[0], text[1], text[2]);
  py::PyObject* code = payload ? api.PyMarshal_ReadObjectFromString(payload->data(), static_cast<std::ptrdiff_t>(payload->size())) : nullptr;
  if (code) return code;
  api.PyErr_Clear();  // corrupt: the loader reads it again and says so as it would
  return api.Py_BuildValue("");
}

py::PyMethodDef read_pyc_def{"_read_pyc_c", &read_pyc, py::kMethVarargs,
                             "the script's timestamp pyc, unmarshalled, if fresh; else None"};
}  // namespace

py::Ref script_compiler(const py::Api& api) {
  compiler_api.store(&api, std::memory_order_release);
  return py::Ref(api, api.PyCFunction_NewEx(&compile_script_def, nullptr, nullptr));
}

py::Ref pyc_reader(const py::Api& api) {
  compiler_api.store(&api, std::memory_order_release);
  return py::Ref(api, api.PyCFunction_NewEx(&read_pyc_def, nullptr, nullptr));
}

}  // namespace gilhost
