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

// Whether `st` is something of this user's that no one else may write.
bool private_to_us(const struct stat& st) { return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0; }

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

std::string path_join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string parent_folder(const std::string& path) {
  std::size_t end = path.find_last_of('/');
  if (end == std::string::npos) return "";
  while (end > 0 && path[end - 1] == '/') --end;  // "a//b": "a"
  return end == 0 ? "/" : path.substr(0, end);
}

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

void ensure_private_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode) || !private_to_us(st))
    throw std::runtime_error(dir + " is not a folder of yours that only you may write (it is a link, another user's, "
                                   "or writable by others): gilhost will not use it");
}

UniqueFd open_private_file(const std::string& path, std::size_t& size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {}, folder {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !private_to_us(st)) return {};
  // The folder too: in one that others may write, the file could be replaced between two reads.
  if (::stat(parent_folder(path).c_str(), &folder) != 0 || !private_to_us(folder)) return {};
  size = static_cast<std::size_t>(st.st_size);
  return fd;
}

std::optional<std::string> read_private_file(const std::string& path) {
  std::size_t size = 0;
  const UniqueFd fd = open_private_file(path, size);
  if (!fd) return std::nullopt;
  // Read into its final place, sized by fstat (one allocation, no bounce buffer); a file that grew since
  // is read to its end all the same.
  std::string text(size + 1, '\0');
  std::size_t used = 0;
  for (ssize_t n; (n = ::read(fd.get(), text.data() + used, text.size() - used)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    used += static_cast<std::size_t>(n);
    if (used == text.size()) text.resize(text.size() * 2);
  }
  text.resize(used);
  return text;
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
