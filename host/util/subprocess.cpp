#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "util/clock.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace gilhost {

namespace {

// execvp searches $PATH with allocations, which a forked child must not make: search here, before fork.
std::string resolve_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (const auto& dir : split(path ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;  // execve fails and the child exits 127, as a shell would
}

// Reads what is there now; false at EOF or error.
bool read_some(int fd, int stream, const StreamSink& sink) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink(stream, std::string_view(buf, static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) < sizeof buf) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

}  // namespace

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

namespace {

// In the forked child: a process group of its own, stdin from /dev/null, the pipes as stdout and stderr,
// then the program (exit 127 where it cannot run).
[[noreturn]] void exec_forked(const char* exe, char* const* args, char* const* env, int out_fd, int err_fd,
                              const std::string& cwd, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // An ignored SIGPIPE would outlive the exec (gilhost ignores it while it writes to a pipe).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &dfl, nullptr);
  if (::getppid() != parent) ::_exit(127);
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
  ::execve(exe, args, env);
  ::_exit(127);
}

// Reads the pipes until the child `pid` is reaped, killing its group at the timeout or an interrupt; its
// wait status, or nullopt when waitpid failed.
std::optional<int> watch_process(pid_t pid, Pipe& out, Pipe& err, const ProcessOptions& o, const StreamSink& sink,
                                 ProcessResult& res) {
  // Polls readable at the child's exit, so we need not wait for EOF (or spin) to notice it.
  const UniqueFd pidfd(pidfd_open(pid));
  const std::int64_t deadline = o.timeout_s > 0 ? monotonic_ns() + static_cast<std::int64_t>(o.timeout_s * 1e9) : 0;
  bool open_out = true, open_err = !o.merge_stderr;
  int status = 0;
  bool reaped = false, lost = false;  // lost: waitpid failed, so no status to report
  while (!reaped) {
    if (!res.interrupted && o.interrupt && o.interrupt->load() != 0) {
      res.interrupted = true;
      ::kill(-pid, SIGKILL);
    }
    if (!res.timed_out && deadline && monotonic_ns() >= deadline) {
      res.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    pollfd fds[3];
    int n = 0, slot_out = -1, slot_err = -1;
    if (open_out) fds[slot_out = n++] = {out.read.get(), POLLIN, 0};
    if (open_err) fds[slot_err = n++] = {err.read.get(), POLLIN, 0};
    if (pidfd) fds[n++] = {pidfd.get(), POLLIN, 0};
    // A bounded wait: a timeout is noticed within it (an interrupt's signal ends it at once). Without a
    // pidfd and with both pipes closed, only this wait tells us the child has exited: keep it short.
    const int ready = ::poll(fds, static_cast<nfds_t>(n), pidfd || open_out || open_err ? 50 : 2);
    if (ready > 0) {
      if (slot_out >= 0 && fds[slot_out].revents) open_out = read_some(out.read.get(), 1, sink);
      if (slot_err >= 0 && fds[slot_err].revents) open_err = read_some(err.read.get(), 2, sink);
    }
    pid_t r;
    while ((r = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
    }
    lost = r < 0;
    reaped = r == pid || lost;
  }
  // The child is gone; what it wrote is in the pipes.
  if (open_out) read_some(out.read.get(), 1, sink);
  if (open_err) read_some(err.read.get(), 2, sink);
  if (lost) return std::nullopt;
  return status;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& o, const StreamSink& sink) {
  ProcessResult res;
  if (argv.empty()) return res;
  Pipe out = make_pipe_nonblocking_read(), err = make_pipe_nonblocking_read();
  const std::string exe = resolve_executable(argv[0]);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (o.env) {
    for (const auto& e : *o.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }
  char* const* child_env = o.env ? envp.data() : environ;
  const int err_target = o.merge_stderr ? out.write.get() : err.write.get();
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) return res;
  if (pid == 0) exec_forked(exe.c_str(), args.data(), child_env, out.write.get(), err_target, o.cwd, parent);
  out.write.reset();
  err.write.reset();

  const std::optional<int> status = watch_process(pid, out, err, o, sink, res);
  if (!res.timed_out && !res.interrupted && status) {
    if (WIFEXITED(*status)) res.exit_code = WEXITSTATUS(*status);
    if (WIFSIGNALED(*status)) res.signal = WTERMSIG(*status);
  }
  return res;
}

Captured run_capture(const std::vector<std::string>& argv, double timeout_s) {
  Captured c;
  ProcessOptions o;
  o.timeout_s = timeout_s;
  const ProcessResult r = run_process(argv, o, [&](int stream, std::string_view d) { (stream == 1 ? c.out : c.err).append(d); });
  c.timed_out = r.timed_out;
  c.exit_code = r.exit_code;
  return c;
}

}  // namespace gilhost
