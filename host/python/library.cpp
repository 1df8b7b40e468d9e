#include "python/library.hpp"

#include <dlfcn.h>

#include <utility>

namespace gilhost::py {

SharedLibrary SharedLibrary::open_global(const std::string& path, std::string& error) {
  SharedLibrary lib;
  // Lazy binding: resolving all of libpython's ~1,500 relocations up front costs a run 0.2-0.7 ms, and the
  // runner uses a few dozen functions. RTLD_GLOBAL, so extension modules find libpython's symbols.
  lib.handle_ = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
  lib.path_ = path;
  if (!lib.handle_) {
    const char* msg = ::dlerror();
    error = msg ? msg : ("dlopen failed: " + path);
  }
  return lib;
}

SharedLibrary::SharedLibrary(SharedLibrary&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)), path_(std::move(o.path_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& o) noexcept {
  if (this != &o) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(o.handle_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

// libpython is never really unloaded (CPython does not support it); dlclose only drops our reference.
SharedLibrary::~SharedLibrary() {
  if (handle_) ::dlclose(handle_);
}

void* SharedLibrary::symbol(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

}  // namespace gilhost::py
