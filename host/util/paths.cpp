#include "util/paths.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "util/fd.hpp"

namespace gilhost {

namespace fs = std::filesystem;

namespace {

// /tmp/gilhost-UID, made 0700: a home for a user who has none, never a folder shared with other users.
fs::path private_tmp() {
  const fs::path dir = fs::path("/tmp") / ("gilhost-" + std::to_string(::geteuid()));
  ::mkdir(dir.c_str(), 0700);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    throw std::runtime_error("no HOME, and " + dir.string() + " is not a private folder of yours (mode 0700): set HOME");
  return dir;
}

fs::path home() {
  const char* h = std::getenv("HOME");
  if (h && *h == '/') return h;
  // No HOME (env -i, a service): the password database's, never a shared folder in /tmp.
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  struct stat st {};
  if (::getpwuid_r(::geteuid(), &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir && *found->pw_dir == '/' &&
      ::stat(found->pw_dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid())
    return found->pw_dir;
  return private_tmp();
}

}  // namespace

std::string cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : home() / ".cache";
  return (base / "gilhost").string();
}

std::string data_dir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const fs::path base = xdg && *xdg == '/' ? fs::path(xdg) : home() / ".local" / "share";
  return (base / "gilhost").lexically_normal().string();
}

std::string builds_dir() { return (fs::path(data_dir()) / "pythons").string(); }

std::string companion_program(const std::string& name) {
  std::error_code ec;
  const fs::path bin = fs::read_symlink("/proc/self/exe", ec).parent_path();
  const fs::path beside = bin / name;
  const fs::path installed = (bin.parent_path() / "libexec" / "gilhost" / name).lexically_normal();
  for (const fs::path& p : {beside, installed})
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  return beside.string();
}

std::string proc_exe(pid_t pid) {
  char target[4096];
  const std::string path = "/proc/" + std::to_string(pid) + "/exe";
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

}  // namespace gilhost
