#include "run/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "measure/clock.hpp"
#include "measure/sampler.hpp"
#include "util/fd.hpp"

namespace gilhost {

void BoundedCapture::append(const char* data, std::size_t n) {
  total_ += n;
  std::size_t to_head = std::min(n, head_limit_ - std::min(head_limit_, head_.size()));
  head_.append(data, to_head);
  data += to_head;
  n -= to_head;
  if (n == 0) return;
  if (n >= tail_limit_) {
    tail_.assign(data + n - tail_limit_, tail_limit_);
  } else {
    tail_.append(data, n);
    if (tail_.size() > tail_limit_) tail_.erase(0, tail_.size() - tail_limit_);
  }
}

std::string BoundedCapture::text() const {
  if (!truncated()) return head_ + tail_;
  return head_ + "\n[... " + std::to_string(total_ - head_.size() - tail_.size()) + " bytes not kept ...]\n" + tail_;
}

void become_subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

void reap_orphans() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

namespace {

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

// In the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const ChildRequest& req, int out_fd, int err_fd, int event_fd, char* const* argv,
                             char* const* envp) {
  ::setpgid(0, 0);
  // Undo what the parent set for itself: the child starts with default signal dispositions.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &dfl, nullptr);
  ::sigaction(SIGTERM, &dfl, nullptr);
  ::sigaction(SIGPIPE, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  if (event_fd == req.event_fd) {
    int flags = ::fcntl(event_fd, F_GETFD);
    ::fcntl(event_fd, F_SETFD, flags & ~FD_CLOEXEC);
  } else {
    ::dup2(event_fd, req.event_fd);
  }
  ::execve(argv[0], argv, envp);
  const char msg[] = "gilhost: cannot execute the runner\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  ::_exit(127);
}

// Reads what is available now; false at EOF or error.
bool drain(int fd, const std::function<void(const char*, std::size_t)>& sink) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

}  // namespace

ChildResult run_child(const ChildRequest& req) {
  ChildResult res;
  Pipe out = make_pipe(), err = make_pipe(), events = make_pipe();
  std::vector<char*> argv, envp;
  for (const auto& a : req.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : req.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  if (::access(argv[0], X_OK) != 0) {
    res.spawn_error = std::string("cannot execute ") + argv[0] + ": " + std::strerror(errno);
    return res;
  }

  const std::int64_t start = monotonic_ns();
  pid_t pid = ::fork();
  if (pid < 0) {
    res.spawn_error = std::string("fork failed: ") + std::strerror(errno);
    return res;
  }
  if (pid == 0) exec_child(req, out.write.get(), err.write.get(), events.write.get(), argv.data(), envp.data());
  ::setpgid(pid, pid);  // also here, so the group exists before we ever signal it
  res.pid = pid;
  out.write.reset();
  err.write.reset();
  events.write.reset();
  for (int fd : {out.read.get(), err.read.get(), events.read.get()}) set_nonblocking(fd);

  UniqueFd pidfd(pidfd_open(pid));
  BoundedCapture cap_out(req.head_limit, req.tail_limit), cap_err(req.head_limit, req.tail_limit);
  std::string event_buf;
  auto on_out = [&](const char* d, std::size_t n) {
    cap_out.append(d, n);
    if (req.echo_output) write_all(2, d, n);
  };
  auto on_err = [&](const char* d, std::size_t n) {
    cap_err.append(d, n);
    if (req.echo_output) write_all(2, d, n);
  };
  auto on_event = [&](const char* d, std::size_t n) {
    event_buf.append(d, n);
    std::size_t nl;
    while ((nl = event_buf.find('\n')) != std::string::npos) {
      auto j = nlohmann::json::parse(event_buf.substr(0, nl), nullptr, false);
      if (!j.is_discarded()) res.events.push_back(std::move(j));
      event_buf.erase(0, nl + 1);
    }
  };

  const std::int64_t interval = static_cast<std::int64_t>(req.sample_interval_ms) * 1000000;
  // A full /proc scan about every 50 ms finds new processes; known ones are read every tick.
  TreeSampler sampler(pid, static_cast<int>(std::max<std::int64_t>(1, 50000000 / interval)));
  sampler.sample();
  const std::int64_t deadline = start + static_cast<std::int64_t>(req.timeout_s * 1e9);
  std::int64_t next_sample = start + interval;
  bool open_out = true, open_err = true, open_events = true;
  int status = 0;
  bool reaped = false;

  while (!reaped) {
    const std::int64_t now = monotonic_ns();
    if (req.interrupt && req.interrupt->load()) {
      res.interrupted = true;
      ::kill(-pid, SIGKILL);
    } else if (now >= deadline && !res.timed_out) {
      res.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    if (now >= next_sample) {
      sampler.sample();
      next_sample = std::max(next_sample + interval, now + interval / 2);
    }
    pollfd fds[4];
    int nfds = 0;
    if (open_out) fds[nfds++] = {out.read.get(), POLLIN, 0};
    if (open_err) fds[nfds++] = {err.read.get(), POLLIN, 0};
    if (open_events) fds[nfds++] = {events.read.get(), POLLIN, 0};
    if (pidfd) fds[nfds++] = {pidfd.get(), POLLIN, 0};
    std::int64_t wait_ns = std::min(next_sample, deadline) - monotonic_ns();
    if (!pidfd) wait_ns = std::min<std::int64_t>(wait_ns, 5000000);  // no pidfd: poll for exit
    int timeout_ms = static_cast<int>(std::max<std::int64_t>(0, (wait_ns + 999999) / 1000000));
    if (res.timed_out || res.interrupted) timeout_ms = std::min(timeout_ms, 10);
    ::poll(fds, static_cast<nfds_t>(nfds), timeout_ms);
    if (open_out) open_out = drain(out.read.get(), on_out);
    if (open_err) open_err = drain(err.read.get(), on_err);
    if (open_events) open_events = drain(events.read.get(), on_event);
    pid_t r = ::wait4(pid, &status, WNOHANG, &res.usage);
    if (r == pid) reaped = true;
  }
  res.wall_ns = monotonic_ns() - start;

  // Whatever is left in the pipes now; descendants that still hold them open are killed below.
  drain(out.read.get(), on_out);
  drain(err.read.get(), on_err);
  drain(events.read.get(), on_event);
  // Anything of the tree still alive (daemons, setsid'd grandchildren) is killed: no orphans survive a run.
  std::vector<pid_t> leftovers = sampler.live_members();
  res.leftover_processes = static_cast<int>(leftovers.size());
  ::kill(-pid, SIGKILL);
  for (pid_t member : leftovers) ::kill(member, SIGKILL);
  reap_orphans();

  res.exited = WIFEXITED(status);
  res.exit_code = res.exited ? WEXITSTATUS(status) : -1;
  res.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  res.stdout_text = cap_out.text();
  res.stderr_text = cap_err.text();
  res.stdout_bytes = cap_out.total();
  res.stderr_bytes = cap_err.total();
  res.sampling = sampler.summary();
  return res;
}

}  // namespace gilhost
