#include "util/private_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gilhost {

namespace {
// Whether `st` is something of this user's that no one else may write. gilhost never changes its user,
// so the user is asked once (a runner checks a file and its folder twice before its case).
bool private_to_us(const struct stat& st) {
  static const uid_t us = ::geteuid();
  return st.st_uid == us && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
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

void ensure_private_dir(const std::string& dir) {
  // Its parents as `mkdir -p` makes them (the umask's mode; errors left to the checks below).
  for (std::size_t at = dir.find('/', 1); at != std::string::npos; at = dir.find('/', at + 1))
    if (dir[at - 1] != '/') ::mkdir(dir.substr(0, at).c_str(), 0777);
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

}  // namespace gilhost
