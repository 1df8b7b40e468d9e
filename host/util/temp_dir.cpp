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

namespace {
// The pid in a name owned() makes, PID-WHAT-XXXXXX (WHAT lowercase letters, XXXXXX mkdtemp's six
// characters); 0 for any other name. Exactly that shape: the folders these live in hold other things
// named "<digits>-...", such as a download kept as "21686766-python3.14_3.14.7.orig.tar.gz" (its URL's
// hash, which is all digits now and then).
long owner_pid(const std::string& name) {
  const std::size_t dash = name.find('-');
  if (dash == 0 || dash == std::string::npos || name.find_first_not_of("0123456789") != dash) return 0;
  const std::size_t second = name.find('-', dash + 1);
  if (second == std::string::npos || second == dash + 1 || name.size() != second + 7) return 0;
  for (std::size_t i = dash + 1; i < second; ++i)
    if (name[i] < 'a' || name[i] > 'z') return 0;
  return std::strtol(name.c_str(), nullptr, 10);
}
}  // namespace

void TempDir::remove_orphans(const std::string& parent) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    std::error_code type_ec;
    if (e.symlink_status(type_ec).type() != fs::file_type::directory) continue;  // owned() makes folders only
    const long pid = owner_pid(e.path().filename().string());
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
