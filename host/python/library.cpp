#include "python/library.hpp"

#include <dlfcn.h>

#include <utility>

namespace gilhost::py {

SharedLibrary SharedLibrary::open_global(const std::string& path, std::string& error) {
  SharedLibrary lib;
  // Every symbol bound now, not at its first call: a no-op run calls ~580 of libpython's functions through
  // the lazy-binding trampoline (which saves the vector registers each time), and binding all ~1,900 at
  // once cost a run 0.5-1.3 % less (docs/performance.md, "Binding libpython's symbols at load"). Nor does
  // a case then pay the loader for the first call of a function it is timed in. Lazily where a symbol
  // cannot be bound (a library that leans on its program for one): as `python` itself would load it.
  // RTLD_GLOBAL, so extension modules find libpython's symbols.
  lib.handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!lib.handle_) lib.handle_ = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
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
