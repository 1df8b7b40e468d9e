#include "util/fd.hpp"

#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace gilhost {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

Pipe make_pipe_nonblocking_read() {
  Pipe p = make_pipe();
  // A new pipe's read end has no status flag but its access mode, which F_SETFL leaves alone: no F_GETFL.
  ::fcntl(p.read.get(), F_SETFL, O_NONBLOCK);
  return p;
}

// FD_CLOEXEC is the only descriptor flag Linux has, so it is set without reading the others first (one
// system call, not two: the runner does this before its case, where each costs 5-15 us on a slow VM).
void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int pidfd_open(int pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

void read_pid_list(int fd, std::vector<pid_t>& out) {
  char buf[4096];
  std::string text;
  ssize_t n;
  // A short read is the whole file (it is generated in one go): no second read for its end.
  for (off_t at = 0; (n = ::pread(fd, buf, sizeof buf, at)) > 0; at += n) {
    text.append(buf, static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < sizeof buf) break;
  }
  const char* p = text.c_str();
  char* end = nullptr;
  for (long v = std::strtol(p, &end, 10); end != p; v = std::strtol(p, &end, 10)) {
    out.push_back(static_cast<pid_t>(v));
    p = end;
  }
}

std::string read_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw std::system_error(errno, std::generic_category(), path);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

void write_user_file(const std::string& path, const std::string& content) {
  OutputSink sink(path);
  sink.write(content);
  sink.finish();
}

}  // namespace gilhost
