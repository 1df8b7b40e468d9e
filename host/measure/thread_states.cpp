#include "measure/thread_states.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/clock.hpp"

namespace gilhost {

// ---- reading /proc ----

SyscallReading parse_syscall(const char* text) {
  SyscallReading r;
  if (std::strncmp(text, "running", 7) == 0) {
    r.kind = SyscallReading::Kind::running;
    return r;
  }
  char* end = nullptr;
  const long nr = std::strtol(text, &end, 10);
  if (end == text) return r;
  if (nr < 0) {
    r.kind = SyscallReading::Kind::outside_syscall;
    return r;
  }
  r.kind = SyscallReading::Kind::in_syscall;
  r.number = static_cast<int>(nr);
  const char* p = end;
  r.arg0 = std::strtoull(p, &end, 16);
  p = end;
  r.arg1 = std::strtoull(p, &end, 16);
  return r;
}

bool ProcessGils::holds(std::uint64_t address) const {
  for (const auto& w : windows)
    if (w.holds(address)) return true;
  return false;
}

namespace {

// A futex operation that waits (FUTEX_WAIT, FUTEX_WAIT_BITSET, the PI locks), whatever its flags.
bool futex_waits(std::uint64_t op) {
  const std::uint64_t cmd = op & FUTEX_CMD_MASK;
  return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI || cmd == FUTEX_WAIT_REQUEUE_PI
#ifdef FUTEX_LOCK_PI2
         || cmd == FUTEX_LOCK_PI2
#endif
      ;
}

bool is_io_call(int nr) {
  switch (nr) {
    case SYS_read: case SYS_write: case SYS_readv: case SYS_writev: case SYS_pread64: case SYS_pwrite64:
    case SYS_preadv: case SYS_pwritev: case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
    case SYS_recvmmsg: case SYS_sendmmsg: case SYS_accept: case SYS_accept4: case SYS_connect:
    case SYS_epoll_pwait: case SYS_sendfile: case SYS_splice: case SYS_openat: case SYS_fsync:
    case SYS_fdatasync: case SYS_io_uring_enter: case SYS_io_getevents:
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
#ifdef SYS_open
    case SYS_open:
#endif
      return true;
    default: return false;
  }
}

}  // namespace

ThreadState classify_wait(const SyscallReading& r, const ProcessGils& gils) {
  if (r.kind != SyscallReading::Kind::in_syscall) return ThreadState::other;
  switch (r.number) {
    case SYS_futex:
      if (!futex_waits(r.arg1)) return ThreadState::other;
      return gils.holds(r.arg0) ? ThreadState::gil : ThreadState::lock;
    case SYS_nanosleep: case SYS_clock_nanosleep:
#ifdef SYS_pause
    case SYS_pause:
#endif
      return ThreadState::sleep;
    // select and poll on no descriptor are how older Pythons sleep (time.sleep before 3.11).
#ifdef SYS_select
    case SYS_select:
#endif
    case SYS_pselect6: return r.arg0 == 0 ? ThreadState::sleep : ThreadState::io;
#ifdef SYS_poll
    case SYS_poll:
#endif
    case SYS_ppoll: return r.arg1 == 0 ? ThreadState::sleep : ThreadState::io;
    default: return is_io_call(r.number) ? ThreadState::io : ThreadState::other;
  }
}

namespace {

UniqueFd open_task_file(pid_t pid, pid_t tid, const char* file) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/%s", static_cast<int>(pid), static_cast<int>(tid), file);
  return UniqueFd(::open(path, O_RDONLY | O_CLOEXEC));
}

// The whole (small) file at `fd` from its start, NUL-terminated in `buf`; its length, or -1.
ssize_t read_small(int fd, char* buf, std::size_t size) {
  const ssize_t n = ::pread(fd, buf, size - 1, 0);
  buf[n > 0 ? n : 0] = 0;
  return n;
}

bool read_schedstat(int fd, std::int64_t& cpu_ns, std::int64_t& delay_ns) {
  char buf[128];
  if (read_small(fd, buf, sizeof buf) <= 0) return false;
  char* end = nullptr;
  cpu_ns = std::strtoll(buf, &end, 10);
  delay_ns = std::strtoll(end, nullptr, 10);
  return true;
}

std::string read_comm(pid_t pid, pid_t tid) {
  UniqueFd fd = open_task_file(pid, tid, "comm");
  char buf[64];
  if (!fd || read_small(fd.get(), buf, sizeof buf) <= 0) return "";
  std::string name(buf);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

std::string exe_of(pid_t pid) {
  char path[64], target[4096];
  std::snprintf(path, sizeof path, "/proc/%d/exe", static_cast<int>(pid));
  const ssize_t n = ::readlink(path, target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "";
}

}  // namespace

// ---- sampling ----

namespace {
bool blocked(const ThreadReading& r) {
  return r.syscall.kind == SyscallReading::Kind::in_syscall || r.syscall.kind == SyscallReading::Kind::outside_syscall;
}
}  // namespace

ThreadStateSampler::ThreadStateSampler(pid_t root, std::int64_t start_ns, int interval_ms)
    : root_(root), start_ns_(start_ns) {
  obs_.interval_ms = interval_ms;
  obs_.root = root;
}

// A Python process of the run: the root, its forks (the same program), or a program named python*
// (multiprocessing's spawn and forkserver workers). Read once per process.
void ThreadStateSampler::note_process(pid_t pid) {
  if (obs_.processes.count(pid)) return;
  const std::string exe = exe_of(pid);
  if (pid == root_) root_exe_ = exe;
  const std::string base = exe.substr(exe.rfind('/') + 1);
  ThreadObservations::Process& p = obs_.processes[pid];
  p.root_program = pid == root_ || (!exe.empty() && exe == root_exe_);
  p.python = p.root_program || base.rfind("python", 0) == 0;
}

void ThreadStateSampler::list_threads(pid_t pid, Process& p) {
  p.tids.clear();
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  DIR* dir = ::opendir(path);
  if (!dir) return;
  while (dirent* e = ::readdir(dir))
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9') p.tids.push_back(static_cast<pid_t>(std::atol(e->d_name)));
  ::closedir(dir);
  p.listed_threads = static_cast<long>(p.tids.size());
}

void ThreadStateSampler::sample_process(pid_t pid, long threads, bool rescan) {
  const std::int64_t t0 = monotonic_ns();
  Process& p = processes_[pid];
  if (threads == 1) {
    p.tids.assign(1, pid);
    p.listed_threads = 1;
  } else if (rescan || threads != p.listed_threads) {
    list_threads(pid, p);
  }
  note_process(pid);
  for (pid_t tid : p.tids) {
    auto [it, added] = tracks_.try_emplace(tid);
    Track& t = it->second;
    if (added) {
      t.data.pid = pid;
      t.data.tid = tid;
    }
    if (t.gone) continue;
    // Named at first sight; again at rescans in its first ~50 readings, as threads name themselves
    // once started (threading does on 3.14).
    if (added || (rescan && t.data.readings.size() < 50)) {
      std::string name = read_comm(pid, tid);
      if (!name.empty()) t.data.name = std::move(name);
    }
    due_.push_back(&t);
  }
  obs_.cost_ns += monotonic_ns() - t0;
}

void ThreadStateSampler::read_thread(Track& t, std::int64_t now_ns) {
  const bool had_fds = static_cast<bool>(t.schedstat);
  UniqueFd sched = had_fds ? std::move(t.schedstat) : open_task_file(t.data.pid, t.data.tid, "schedstat");
  UniqueFd sys = had_fds ? std::move(t.syscall) : open_task_file(t.data.pid, t.data.tid, "syscall");
  ThreadReading r;
  r.t_ns = now_ns - start_ns_;
  if (!sched || !read_schedstat(sched.get(), r.cpu_ns, r.delay_ns)) {
    t.gone = true;  // exited: its last reading stands
    if (had_fds) --with_fds_;
    return;
  }
  // The syscall file is the dearer read (a permission check and the task's registers): not read again for a
  // thread that has not run since its last reading found it blocked (it is blocked there still), nor for
  // one that was on a CPU or queued for one nearly all the time since (it is running).
  const ThreadReading* last = t.data.readings.empty() ? nullptr : &t.data.readings.back();
  if (last && blocked(*last) && last->cpu_ns == r.cpu_ns && last->delay_ns == r.delay_ns) {
    r.syscall = last->syscall;
  } else if (last && 10 * ((r.cpu_ns - last->cpu_ns) + (r.delay_ns - last->delay_ns)) >= 9 * (r.t_ns - last->t_ns)) {
    r.syscall.kind = SyscallReading::Kind::running;
  } else {
    char buf[256];
    if (sys && read_small(sys.get(), buf, sizeof buf) > 0) r.syscall = parse_syscall(buf);
  }
  t.data.readings.push_back(r);
  // Kept open for the next tick, for the first kMaxThreadsWithFds threads.
  if (had_fds || with_fds_ < kMaxThreadsWithFds) {
    if (!had_fds) ++with_fds_;
    t.schedstat = std::move(sched);
    t.syscall = std::move(sys);
  }
}

void ThreadStateSampler::end_tick() {
  const std::int64_t t0 = monotonic_ns();
  // Every thread due this tick, or kMaxThreadsPerTick of them in turn: a run of thousands of threads
  // then costs each tick a bounded time, and each thread is read every few ticks.
  const std::size_t n = due_.size();
  const std::size_t count = std::min<std::size_t>(n, kMaxThreadsPerTick);
  if (n > 0) {
    const std::int64_t now = t0;
    for (std::size_t k = 0; k < count; ++k) read_thread(*due_[(cursor_ + k) % n], now);
    cursor_ = n > count ? (cursor_ + count) % n : 0;
  }
  due_.clear();
  ++obs_.ticks;
  obs_.cost_ns += monotonic_ns() - t0;
}

ThreadObservations ThreadStateSampler::take() {
  obs_.threads.clear();
  for (auto& [tid, t] : tracks_)
    if (!t.data.readings.empty()) obs_.threads.push_back(std::move(t.data));
  tracks_.clear();
  return std::move(obs_);
}

}  // namespace gilhost
