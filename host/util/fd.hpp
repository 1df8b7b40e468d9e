#pragma once
// RAII owners for file descriptors and pipes.
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace gilhost {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// A pipe whose both ends are close-on-exec; throws std::system_error.
Pipe make_pipe();
// The same, its read end non-blocking (its write end, for a child, blocking as usual).
Pipe make_pipe_nonblocking_read();
void set_cloexec(int fd);
// Writes all bytes, retrying on EINTR and short writes; false on error.
bool write_all(int fd, const char* data, std::size_t size);
inline bool write_all(int fd, const std::string& s) { return write_all(fd, s.data(), s.size()); }
// A descriptor that polls readable when process `pid` (our child) exits; -1 where the kernel has none.
int pidfd_open(int pid);
// Appends the pids listed in an open file of them (/proc/PID/task/TID/children, a cgroup's cgroup.procs),
// read from its start (pread: such a file can stay open and be read again).
void read_pid_list(int fd, std::vector<pid_t>& out);
// Whole file as a string; throws std::system_error with the path.
std::string read_file(const std::string& path);
// Through util/atomic_file's AtomicFile (mkstemp beside path, fsync, rename; the temporary removed on
// any failure). A cache's file: whatever stood at path (a FIFO too) is replaced.
void write_file_atomic(const std::string& path, const std::string& content);
// A file the user named (-o): util/atomic_file's OutputSink (/dev/null, a FIFO or /dev/stdout written in
// place; a regular file as write_file_atomic).
void write_user_file(const std::string& path, const std::string& content);

}  // namespace gilhost
