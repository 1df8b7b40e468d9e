#include "util/subprocess.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "measure/clock.hpp"
#include "util/fd.hpp"

namespace gilhost {

Captured run_capture(const std::vector<std::string>& argv, double timeout_s) {
  Captured c;
  Pipe out = make_pipe(), err = make_pipe();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return c;
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out.write.get(), 1);
    ::dup2(err.write.get(), 2);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  out.write.reset();
  err.write.reset();
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
  pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {err.read.get(), POLLIN, 0}};
  std::string* sinks[2] = {&c.out, &c.err};
  int open_count = 2;
  while (open_count > 0) {
    std::int64_t left_ms = (deadline - monotonic_ns()) / 1000000;
    if (left_ms <= 0) {
      c.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left_ms));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[8192];
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!c.timed_out && WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  return c;
}

}  // namespace gilhost
