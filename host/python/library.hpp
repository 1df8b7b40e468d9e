#pragma once
// One shared library opened with dlopen, closed when the owner goes.
#include <string>

namespace gilhost::py {

class SharedLibrary {
 public:
  // RTLD_GLOBAL so that extension modules (which are not linked against libpython) find its symbols.
  static SharedLibrary open_global(const std::string& path, std::string& error);
  SharedLibrary() = default;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  SharedLibrary(SharedLibrary&& o) noexcept;
  SharedLibrary& operator=(SharedLibrary&& o) noexcept;
  ~SharedLibrary();

  bool valid() const { return handle_ != nullptr; }
  void* symbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace gilhost::py
