#include "util/session_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "util/paths.hpp"

namespace gilhost {

namespace {

UniqueFd open_lock_file(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) throw std::system_error(errno, std::generic_category(), "cannot open the session lock " + path);
  return fd;
}

// flock, retrying on EINTR; false when `nonblocking` and another holds it.
bool lock(int fd, bool nonblocking, const std::string& path) {
  for (;;) {
    if (::flock(fd, LOCK_EX | (nonblocking ? LOCK_NB : 0)) == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    throw std::system_error(errno, std::generic_category(), "cannot lock " + path);
  }
}

std::string read_holder(int fd) {
  std::string text;
  char buf[512];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "another gilhost session" : text;
}

void write_holder(int fd, const std::string& holder) {
  if (::ftruncate(fd, 0) != 0) return;  // only a courtesy to the next session: never fatal
  const std::string line = holder + "\n";
  (void)!::pwrite(fd, line.data(), line.size(), 0);
}

}  // namespace

SessionLock SessionLock::acquire(const std::string& path, const std::string& holder,
                                 const std::function<void(const std::string& other)>& on_wait) {
  UniqueFd fd = open_lock_file(path);
  if (!lock(fd.get(), true, path)) {
    if (on_wait) on_wait(read_holder(fd.get()));
    lock(fd.get(), false, path);
  }
  write_holder(fd.get(), holder);
  return SessionLock(std::move(fd));
}

SessionLock SessionLock::try_acquire(const std::string& path, const std::string& holder) {
  UniqueFd fd = open_lock_file(path);
  if (!lock(fd.get(), true, path)) return SessionLock(UniqueFd());
  write_holder(fd.get(), holder);
  return SessionLock(std::move(fd));
}

std::string default_session_lock_path() {
  return (std::filesystem::path(cache_dir()) / "session.lock").string();
}

}  // namespace gilhost
