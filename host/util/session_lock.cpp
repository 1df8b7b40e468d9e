#include "util/session_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "util/paths.hpp"

namespace gilhost {

namespace {

// What to do when the lock cannot be had: the caches are optional, the lock is not needed to measure.
constexpr const char* kWayOut =
    " (give --no-lock to measure without the lock, or point XDG_CACHE_HOME at a folder you can write: the "
    "caches are optional)";

UniqueFd open_lock_file(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  try {
    ensure_private_dir(folder.string());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the session lock's folder: ") + e.what() + kWayOut);
  }
  // Never through a link, never blocking on a FIFO put in its place.
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600));
  if (!fd) throw std::runtime_error("cannot open the session lock " + path + ": " + std::strerror(errno) + kWayOut);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
    throw std::runtime_error("the session lock " + path + " is not a regular file of yours" + kWayOut);
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
