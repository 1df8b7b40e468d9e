#include "util/temp_dir.hpp"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

namespace gilhost {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& parent, const std::string& prefix) {
  fs::create_directories(parent);
  std::string templ = (fs::path(parent) / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(templ.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + templ);
  path_ = templ;
}

TempDir TempDir::owned(const std::string& parent, const std::string& what) {
  return TempDir(parent, std::to_string(::getpid()) + "-" + what);
}

void TempDir::remove_orphans(const std::string& parent) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    const std::size_t dash = name.find('-');
    if (dash == 0 || dash == std::string::npos || name.find_first_not_of("0123456789") != dash) continue;
    const long pid = std::strtol(name.c_str(), nullptr, 10);
    // Gone for sure only when kill says so: EPERM is a live process of another user.
    if (pid > 0 && pid <= 0x7fffffff && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(e.path(), ignored);
    }
  }
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

TempDir::~TempDir() { remove(); }

void TempDir::remove() noexcept {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  path_.clear();
}

}  // namespace gilhost
