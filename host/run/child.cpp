#include "run/child.hpp"

#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>

#include "util/clock.hpp"
#include "measure/exact_recorder.hpp"
#include "measure/sampler.hpp"
#include "util/fd.hpp"
#include "run/run_cgroup.hpp"
#include "util/clone_into_cgroup.hpp"

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

// `fd` as `target` in an exec'd program: dup2, or clear close-on-exec where it is there already.
void place_fd(int fd, int target) {
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);  // FD_CLOEXEC is the only descriptor flag
  } else {
    ::dup2(fd, target);
  }
}

// What the child needs to exec the run's program: the pipes' write ends (read ends for the watch and the
// token), the cgroup.procs to join (-1: made in the cgroup already, or none), argv and envp.
struct ExecArgs {
  const ChildRequest* req = nullptr;
  int out_fd = -1, err_fd = -1, event_fd = -1, watch_fd = -1, token_fd = -1, cgroup_procs = -1;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  pid_t parent = 0;
};

// In the vfork child, which shares our memory until it execs: system calls only (no allocation, no
// locks, no return from here), with every signal blocked until the handlers are back to the defaults.
[[noreturn]] void exec_child(const ExecArgs& a) {
  const ChildRequest& req = *a.req;
  int event_fd = a.event_fd, watch_fd = a.watch_fd, token_fd = a.token_fd;
  char* const* argv = a.argv;
  char* const* envp = a.envp;
  ::setpgid(0, 0);
  // Into the session's cgroup (run/run_cgroup): whatever the run starts stays there, setsid or not.
  if (a.cgroup_procs >= 0) {
    ssize_t ignored = ::write(a.cgroup_procs, "0", 1);
    (void)ignored;
  }
  // If we die however we die (kill -9 included), the runner dies with us rather than run on unwatched
  // (and its whole group with it: the watch pipe below).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != a.parent) ::_exit(127);
  // Undo what the parent set for itself: the child starts with default signal dispositions.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &dfl, nullptr);
  ::sigaction(SIGTERM, &dfl, nullptr);
  ::sigaction(SIGPIPE, &dfl, nullptr);
  ::sigaction(SIGHUP, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Each descriptor first out of the way of every number they go to (0-2 and the pipes' places), so that
  // placing one never overwrites one not yet placed: the program's before anything is placed, then the
  // pipes, each to its place, inheritable.
  const int above = std::max({req.event_fd, req.watch_fd, req.token_fd, 2}) + 1;
  auto lift = [above](int fd) { return fd >= 0 && fd < above ? ::fcntl(fd, F_DUPFD_CLOEXEC, above) : fd; };
  const int exec_fd = lift(req.exec_fd);
  // Close-on-exec: its copy at 0 is the program's stdin, and the program has no other (it used to find
  // /dev/null open at some number of ours as well).
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(a.out_fd, 1);
  ::dup2(a.err_fd, 2);
  event_fd = lift(event_fd);
  watch_fd = lift(watch_fd);
  token_fd = lift(token_fd);
  place_fd(event_fd, req.event_fd);
  // The token, in a pipe the runner reads to its end and closes before the case: never on a command line.
  if (token_fd >= 0 && req.token_fd >= 0) place_fd(token_fd, req.token_fd);
  if (watch_fd >= 0 && req.watch_fd >= 0) {
    place_fd(watch_fd, req.watch_fd);
    // When its write end closes (only we hold it: we ended, kill -9 included), the kernel signals the
    // owner of the read end, here our new process group, with SIGKILL: the child, its pool workers and
    // its subprocesses, whatever handlers they installed. Synchronous in our exit, before the death
    // signal above, and no thread or process of the child's to do it.
    ::fcntl(req.watch_fd, F_SETSIG, SIGKILL);
    ::fcntl(req.watch_fd, F_SETOWN, -::getpid());
    ::fcntl(req.watch_fd, F_SETFL, O_ASYNC);  // a new pipe's read end: no other status flag to keep
  }
  if (exec_fd >= 0) ::syscall(SYS_execveat, exec_fd, "", argv, envp, AT_EMPTY_PATH);
  ::execve(argv[0], argv, envp);  // no descriptor, or the kernel would not exec through it
  const char msg[] = "gilhost: cannot execute the runner\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
  ::_exit(127);
}

void exec_child_entry(void* args) { exec_child(*static_cast<const ExecArgs*>(args)); }

// The child, started in the session's cgroup where the kernel can (util/clone_into_cgroup), else by vfork,
// joining the cgroup before it execs. Returns as vfork does, once the child has exec'd or exited.
pid_t start_child(ExecArgs args) {
  const int cgroup_dir = args.cgroup_procs >= 0 ? RunCgroup::session().clone_dir_fd() : -1;
  if (cgroup_dir >= 0) {
    ExecArgs in_cgroup = args;
    in_cgroup.cgroup_procs = -1;
    const pid_t pid = vfork_into_cgroup(cgroup_dir, exec_child_entry, &in_cgroup);
    if (pid > 0) return pid;
    if (errno == ENOSYS || errno == EINVAL || errno == E2BIG) RunCgroup::clone_into_unsupported();
  }
  const pid_t pid = ::vfork();
  if (pid == 0) exec_child(args);
  return pid;
}

// Reads what is available now, at most 1 MiB, so a writer faster than us cannot keep us from the
// timeout, the sampler and the interrupt; false at EOF or error.
bool drain(int fd, const std::function<void(const char*, std::size_t)>& sink) {
  char buf[65536];
  for (int reads = 0; reads < 16; ++reads) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

// Whether our child `pid` has exited (a zombie not yet reaped), without reaping it.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// The run's descriptors in one epoll set (its output pipes and its pidfd; the event pipe is read at the
// ticks), registered once: an idle sampling tick is then one epoll_pwait2, where a ppoll registered and
// unregistered all of them on every call (~3 us of a ~30 us tick at 1 ms on the development VM). Falls
// back to ppoll where epoll_pwait2 is missing (Linux < 5.11).
class Waiter {
 public:
  static constexpr int kSlots = 3;
  Waiter() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {}
  void add(int slot, int fd) {
    fds_[slot] = fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(slot);
    if (epoll_ && ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) epoll_.reset();
  }
  void remove(int slot) {
    if (fds_[slot] < 0) return;
    if (epoll_) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fds_[slot], nullptr);
    fds_[slot] = -1;
  }
  // Waits up to `ns` for any registered descriptor; the slots ready (every slot after EINTR or an error).
  unsigned wait(std::int64_t ns) {
    const timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    if (epoll_) {
      epoll_event evs[kSlots];
      const int n = ::epoll_pwait2(epoll_.get(), evs, kSlots, &ts, nullptr);
      if (n >= 0) {
        unsigned ready = 0;
        for (int i = 0; i < n; ++i) ready |= 1u << evs[i].data.u32;
        return ready;
      }
      if (errno != ENOSYS) return ~0u;
      epoll_.reset();  // no epoll_pwait2 in this kernel: ppoll from now on
    }
    pollfd pfds[kSlots];
    int slot_of[kSlots], nfds = 0;
    for (int slot = 0; slot < kSlots; ++slot)
      if (fds_[slot] >= 0) {
        slot_of[nfds] = slot;
        pfds[nfds++] = {fds_[slot], POLLIN, 0};
      }
    // ppoll: to the nanosecond, so a 1 ms interval is 1 ms, not 1-2.
    if (::ppoll(pfds, static_cast<nfds_t>(nfds), &ts, nullptr) < 0) return ~0u;
    unsigned ready = 0;
    for (int i = 0; i < nfds; ++i)
      if (pfds[i].revents) ready |= 1u << slot_of[i];
    return ready;
  }

 private:
  UniqueFd epoll_;
  int fds_[kSlots] = {-1, -1, -1};
};

// Off the CPU the child started on, if we are on it: vfork's return wakes us where the child runs, and
// from there every tick of ours would take the child's CPU while another stood idle (docs/performance.md).
// We move; the child stays wherever the scheduler put it, its CPUs untouched. Nothing to do on one CPU.
// The child's stat is read through the sampler's descriptor: one open of /proc/PID/stat a run, not two.
void step_off_cpu_of(const TreeSampler& child) {
  cpu_set_t allowed;
  const int here = ::sched_getcpu();
  if (here < 0 || ::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  ProcStat st;
  if (!child.read_root_stat(st) || st.processor != here) return;
  cpu_set_t others = allowed;
  CPU_CLR(here, &others);
  if (::sched_setaffinity(0, sizeof others, &others) == 0) ::sched_setaffinity(0, sizeof allowed, &allowed);
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  ::nanosleep(&ts, nullptr);
}

// The steps of run_child, sharing what the run holds: spawn the child, watch it until it is reaped, clear
// up its tree, and collect the result. The members are destroyed in reverse order: the group (kill and
// reap, if nobody did) before the pipes, as in a function whose locals they were.
class ChildRun {
 public:
  explicit ChildRun(const ChildRequest& req)
      : req_(req), cap_out_(req.head_limit, req.tail_limit), cap_err_(req.head_limit, req.tail_limit) {
    res_.event_fd = req.event_fd;
  }

  // Pipes, vfork and exec: false when nothing ran (spawn_error says why).
  bool spawn();
  // Output and events read as they come, the tree sampled, killed at the timeout or an interrupt: until
  // the child is reaped.
  void watch();
  // What is left in the pipes, and whatever of the tree outlived its root, killed.
  void clear_up();
  // The exit status, the output and what the sampler read.
  ChildResult finish();
  ChildResult take_result() { return std::move(res_); }
  // What must not outlive the run: its process group's slot and watch pipe (it is reaped), and the exact
  // recorder's kernel events (they would record the next run too). The rest (pipes, pidfd, epoll set,
  // the sampler's /proc descriptors) is only closed: see ChildResult::descriptors.
  void end_what_must_end() {
    group_.reset();
    exact_.reset();
  }

 private:
  enum Slot { kOut, kErr, kPid };
  void start_sampling();
  void watch_for_idle(int interval_ms, int max_idle_ticks);
  void police(std::int64_t now);  // interrupt, timeout, sample, progress tick
  void schedule_probe(std::int64_t now);
  std::int64_t wait_ns() const;
  void read_ready(unsigned ready);
  void read_events();
  bool drain_out() { return drain(out_.read.get(), [this](const char* d, std::size_t n) { cap_out_.append(d, n); }); }
  bool drain_err() { return drain(err_.read.get(), [this](const char* d, std::size_t n) { cap_err_.append(d, n); }); }
  bool drain_events() { return drain(events_.read.get(), [this](const char* d, std::size_t n) { take_events(d, n); }); }
  Pipe token_in_pipe() const;
  void take_events(const char* d, std::size_t n);
  void end_event_line(std::int64_t at);  // the line in event_buf_ (or the over-long one) is complete

  const ChildRequest& req_;
  ChildResult res_;
  Pipe out_, err_, events_;
  std::optional<ChildGroup> group_;
  pid_t self_ = 0;
  int subreaper_ = 0;
  std::int64_t start_ = 0, deadline_ = 0, interval_ = 0, next_sample_ = 0, next_tick_ = 0;
  std::int64_t next_probe_ = std::numeric_limits<std::int64_t>::max();  // the thread states' next probe, if any
  std::int64_t next_events_ = 0;  // when the event pipe is read next (read_events)
  UniqueFd pidfd_;
  BoundedCapture cap_out_, cap_err_;
  std::string event_buf_;
  std::uint64_t overlong_ = 0;  // > 0: the bytes so far of a line over kMaxEventLine, not kept
  std::optional<TreeSampler> sampler_;
  std::unique_ptr<ExactRecorder> exact_;  // exact thread states, where asked for and allowed
  std::optional<Waiter> waiter_;
  bool open_out_ = true, open_err_ = true, open_events_ = true;
  std::int64_t events_eof_ = 0;  // when the event pipe closed while the child was still running
  int status_ = 0;
};

bool ChildRun::spawn() {
  out_ = make_pipe_nonblocking_read();
  err_ = make_pipe_nonblocking_read();
  events_ = make_pipe_nonblocking_read();
  // Read at the ticks (read_events): room for a run's events between two reads, where a pipe's 64 KiB
  // would hold back a large result a read for each 64 KiB. As large as the system allows unprivileged.
  ::fcntl(events_.read.get(), F_SETPIPE_SZ, 1 << 20);
  // Its write end is held until the run is over (by the ChildGroup) and never written: it closes early
  // only if we die, and then the kernel SIGKILLs the child's process group (exec_child).
  Pipe watch_pipe;
  if (req_.watch_fd >= 0) watch_pipe = make_pipe();
  Pipe token_pipe = token_in_pipe();
  std::vector<char*> argv, envp;
  for (const auto& a : req_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : req_.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  if (req_.exec_fd < 0 && ::access(argv[0], X_OK) != 0) {
    res_.spawn_error = std::string("cannot execute ") + argv[0] + ": " + std::strerror(errno);
    return false;
  }

  const int cgroup_procs = RunCgroup::session().procs_fd();  // made (with its guardian) at the first run
  self_ = ::getpid();
  ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper_);
  // vfork (or clone3 alike: start_child), not fork: copying our page tables cost each run 0.7-2 ms here,
  // more than the rest of the spawn. All signals stay blocked across it, so no handler of ours runs in the
  // child on our memory.
  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  start_ = monotonic_ns();
  const pid_t pid = start_child({&req_, out_.write.get(), err_.write.get(), events_.write.get(), watch_pipe.read.get(),
                                 token_pipe.read.get(), cgroup_procs, argv.data(), envp.data(), self_});
  const int spawn_errno = errno;
  // Ours before any signal can arrive: from here a handler's ChildGroup::kill_active() finds the group, and
  // however the run ends, the group is killed and reaped. It holds the watch pipe's write end for as long
  // as the run is ours. No setpgid(pid, pid) here: vfork returns only once the child has exec'd (or
  // exited), so its own setpgid(0, 0) has made the group already (ours would fail with EACCES).
  group_.emplace(pid, std::move(watch_pipe.write));
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) {
    res_.spawn_error = std::string("cannot start a process: ") + std::strerror(spawn_errno);
    return false;
  }
  res_.pid = pid;
  if (!req_.event_token.empty()) res_.events.expect(req_.event_token, pid);  // the runner's events only
  out_.write.reset();
  err_.write.reset();
  events_.write.reset();
  watch_pipe.read.reset();
  token_pipe.read.reset();
  return true;
}

// A pipe whose read end holds the run's token and then its end (the write end closed), for the child to
// read at start; empty when the request passes no token that way. The token is far below a pipe's
// capacity, so the write does not block.
Pipe ChildRun::token_in_pipe() const {
  if (req_.token_fd < 0 || req_.event_token.empty()) return {};
  Pipe p = make_pipe();
  if (!write_all(p.write.get(), req_.event_token)) return {};
  p.write.reset();
  return p;
}

void ChildRun::take_events(const char* d, std::size_t n) {
  const std::int64_t at = monotonic_ns();
  // Only the new bytes are searched for a newline, and a line is kept up to kMaxEventLine: a script that
  // writes to the channel without one costs that much memory and one pass over what it wrote.
  while (n > 0) {
    const char* nl = static_cast<const char*>(std::memchr(d, '\n', n));
    const std::size_t part = nl ? static_cast<std::size_t>(nl - d) : n;
    if (overlong_ > 0) {
      overlong_ += part;
    } else if (event_buf_.size() + part > protocol::kMaxEventLine) {
      overlong_ = event_buf_.size() + part;
      std::string().swap(event_buf_);  // its memory back now, not at the end of the run
    } else {
      event_buf_.append(d, part);
    }
    if (!nl) return;
    end_event_line(at);
    d = nl + 1;
    n -= part + 1;
  }
}

void ChildRun::end_event_line(std::int64_t at) {
  if (overlong_ > 0) {
    res_.events.take_overlong(overlong_);
    overlong_ = 0;
  } else {
    res_.events.take_line(event_buf_, at);
    event_buf_.clear();
  }
}

void ChildRun::start_sampling() {
  interval_ = static_cast<std::int64_t>(std::max(1, req_.sample_interval_ms)) * 1000000;
  // Known processes are read every tick; new ones are found by a rescan about every 50 ms: a walk of the
  // tree from our own children when we are a subreaper (the tree's orphans come to us), else a full
  // /proc scan.
  // A full /proc/PID/stat read every ~0.5 s (its CPU ticks are all it adds); the ticks between read statm
  // and the task link count, half the cost or less (measure/sampler.hpp).
  const int rescan_every = static_cast<int>(std::max<std::int64_t>(1, 50000000 / interval_));
  sampler_.emplace(res_.pid, rescan_every, subreaper_ ? self_ : 0, 10 * rescan_every);
  step_off_cpu_of(*sampler_);
  // Exact states where asked and allowed (the runner has just exec'd: one thread, whose descendants all
  // inherit the events), else the sampler reads the threads.
  const int interval_ms = static_cast<int>(interval_ / 1000000);
  if (req_.thread_states && req_.exact_states) exact_ = ExactRecorder::start(res_.pid, start_, interval_ms, res_.exact_why_not);
  if (req_.thread_states && (!exact_ || req_.sampled_beside_exact)) sampler_->sample_threads(interval_ms);
  watch_for_idle(interval_ms, 10 * rescan_every);
  sampler_->sample();
  // At most ~31 years: a larger (or infinite) timeout would overflow the nanosecond deadline.
  const double timeout_s = req_.timeout_s < 1e9 ? std::max(0.0, req_.timeout_s) : 1e9;
  deadline_ = start_ + static_cast<std::int64_t>(timeout_s * 1e9);
  next_sample_ = start_ + interval_;
  next_tick_ = start_ + 1000000000;
}

// An idle tree left unread (measure/sampler.hpp), at most `max_idle_ticks` in a row. Through the run's cgroup
// where it holds the child (new processes are found there in one file too): at 10 ms or more, its CPU count.
// Below, the kernel's switch records, where perf events are allowed (not beside the exact mode's own
// records of the same switches): the cgroup's count lags a running thread by up to a scheduler tick.
void ChildRun::watch_for_idle(int interval_ms, int max_idle_ticks) {
  const RunCgroup& cgroup = RunCgroup::session();
  if (UniqueFd procs = cgroup.procs_holding(res_.pid)) {
    sampler_->find_members_in(std::move(procs));
    if (interval_ms >= 10)
      if (UniqueFd cpu_stat = cgroup.open_for_reading("cpu.stat")) sampler_->watch_tree_cpu(std::move(cpu_stat), max_idle_ticks);
  }
  if (interval_ms < 10 && !exact_) {
    std::string why_not;
    if (auto watch = SwitchWatch::start(res_.pid, why_not)) sampler_->watch_switches(std::move(watch), max_idle_ticks);
  }
}

void ChildRun::police(std::int64_t now) {
  if (req_.interrupt && req_.interrupt->load()) {
    res_.interrupted = true;
    group_->kill();
  } else if (now >= deadline_ && !res_.timed_out) {
    res_.timed_out = true;
    group_->kill();
  }
  if (now >= next_sample_) {
    sampler_->sample(now);
    if (exact_) exact_->drain();
    if (now >= next_events_) {  // at most every 10 ms: at a 1 ms interval, one read a tick was 1 syscall more
      read_events();
      next_events_ = now + 10000000;
    }
    next_sample_ = std::max(next_sample_ + interval_, now + interval_ / 2);
    if (req_.on_tick && now >= next_tick_) {
      next_tick_ += 1000000000;
      req_.on_tick(static_cast<double>(now - start_) / 1e9);
    }
    // A probe already due keeps its time: probes are not drawn from the tick (docs/performance.md, "Probes
    // that do not start from the tick").
    if (next_probe_ == std::numeric_limits<std::int64_t>::max()) schedule_probe(now);
  } else if (now >= next_probe_) {
    sampler_->probe_threads();
    schedule_probe(now);
  }
}

// The thread states' next probe, where threads need them. Before or after the next tick: drawn from the
// last probe, never from a tick, so that probes fall as often in the millisecond after a tick as anywhere
// (a tick's own reading disturbs the threads, and that stretch was seen by no probe).
void ChildRun::schedule_probe(std::int64_t now) {
  const std::int64_t gap = sampler_->next_probe_gap_ns(now);
  next_probe_ = gap > 0 ? now + gap : std::numeric_limits<std::int64_t>::max();
}

std::int64_t ChildRun::wait_ns() const {
  std::int64_t ns = std::min({next_sample_, next_probe_, deadline_}) - monotonic_ns();
  if (!pidfd_) ns = std::min<std::int64_t>(ns, 5000000);  // no pidfd: poll for exit
  if (res_.timed_out || res_.interrupted) ns = std::min<std::int64_t>(ns, 10000000);
  return std::max<std::int64_t>(0, ns);
}

// Only what is ready: an idle tick costs the wait and the sample.
void ChildRun::read_ready(unsigned ready) {
  auto ready_at = [&](Slot slot) { return (ready >> slot) & 1u; };
  if (open_out_ && ready_at(kOut) && !(open_out_ = drain_out())) waiter_->remove(kOut);
  if (open_err_ && ready_at(kErr) && !(open_err_ = drain_err())) waiter_->remove(kErr);
}

// The event pipe is read at the ticks (every 10 ms at most), not as each event comes: a pipe's writer
// wakes its reader onto the writer's own CPU, so reading each event as it came put gilhost on the runner's
// CPU, the other one idle, and the runner waited (docs/performance.md). An event's arrival is then stamped
// up to a tick (or 10 ms) late, which only loosens EventLog's checks (its stamps must come before it).
void ChildRun::read_events() {
  if (!open_events_) return;
  open_events_ = drain_events();
  if (!open_events_ && !has_exited(res_.pid)) events_eof_ = monotonic_ns();
}

void ChildRun::watch() {
  pidfd_ = UniqueFd(pidfd_open(res_.pid));
  start_sampling();
  if (req_.after_spawn) req_.after_spawn();  // while the child starts, with its sampler set up
  waiter_.emplace();
  waiter_->add(kOut, out_.read.get());
  waiter_->add(kErr, err_.read.get());
  if (pidfd_) waiter_->add(kPid, pidfd_.get());
  bool reaped = false;
  while (!reaped) {
    police(monotonic_ns());
    const unsigned ready = waiter_->wait(wait_ns());
    read_ready(ready);
    if (!pidfd_ || ((ready >> kPid) & 1u) || res_.timed_out || res_.interrupted)
      reaped = group_->try_reap(status_, res_.usage);
  }
  const std::int64_t reaped_at = monotonic_ns();
  res_.spawned_at_ns = start_;
  res_.reaped_at_ns = reaped_at;
  // The pipe closes as an exiting process drops its descriptors, a moment before it can be reaped: only
  // a child that ran on well after the pipe closed had its descriptor closed (os.closerange), not exited.
  res_.events_closed_early = events_eof_ > 0 && reaped_at - events_eof_ > 50000000;
}

void ChildRun::clear_up() {
  // Whatever is left in the pipes now; descendants that still hold them open are killed below.
  drain_out();
  drain_err();
  drain_events();
  if (!event_buf_.empty() || overlong_ > 0) end_event_line(monotonic_ns());  // a last line without its newline: cut
  // Anything of the tree still alive (daemons, setsid'd grandchildren) is killed: no orphans survive a run.
  // Again until none is left (bounded): a member may fork while it is being killed, and killed members'
  // children are re-parented to us (subreaper), which a fresh scan finds.
  std::vector<pid_t> leftovers = sampler_->live_members();
  // A process that ends on its own just after the root (multiprocessing's resource tracker sees its
  // pipe close) is no leftover: give the tree up to 200 ms, unless we killed it already.
  for (int waited = 0; !leftovers.empty() && !res_.timed_out && !res_.interrupted && waited < 200; ++waited) {
    sleep_ms(1);
    reap_orphans();
    leftovers = sampler_->live_members();
  }
  res_.leftover_processes = static_cast<int>(leftovers.size());
  for (int round = 0; !leftovers.empty() && round < 200; ++round) {
    group_->kill();
    for (pid_t member : leftovers) ::kill(member, SIGKILL);
    reap_orphans();
    sleep_ms(round < 10 ? 1 : 10);
    leftovers = sampler_->live_members();
  }
  // And whatever the tree walk could not see (a process of the run that left its tree and its group):
  // the run's cgroup holds it still.
  RunCgroup::session().kill();
  reap_orphans();
}

ChildResult ChildRun::finish() {
  res_.exited = WIFEXITED(status_);
  res_.exit_code = res_.exited ? WEXITSTATUS(status_) : -1;
  res_.signal = WIFSIGNALED(status_) ? WTERMSIG(status_) : 0;
  res_.stdout_text = cap_out_.text();
  res_.stderr_text = cap_err_.text();
  res_.stdout_bytes = cap_out_.total();
  res_.stderr_bytes = cap_err_.total();
  res_.sampling = sampler_->summary();
  res_.threads = sampler_->take_thread_observations();
  if (exact_) res_.exact = exact_->finish();
  return std::move(res_);
}

}  // namespace

ChildResult run_child(const ChildRequest& req) {
  auto run = std::make_shared<ChildRun>(req);
  if (!run->spawn()) {
    if (req.after_spawn) req.after_spawn();
    return run->take_result();
  }
  run->watch();
  run->clear_up();
  ChildResult result = run->finish();
  run->end_what_must_end();
  result.descriptors = std::move(run);  // its members no longer read the request
  return result;
}

}  // namespace gilhost
