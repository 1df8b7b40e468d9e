#include "measure/thread_states.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "measure/clock.hpp"

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

namespace {
bool out_of_descriptors(int err) { return err == EMFILE || err == ENFILE || err == ENOMEM; }
}  // namespace

// A Python process of the run: the root, its forks (the same program), or a program named python*
// (multiprocessing's spawn and forkserver workers). Read at first sight, and again at rescans for a
// process of the root's program (a spawn worker is a fork of it until it execs python).
void ThreadStateSampler::note_process(pid_t pid, bool rescan) {
  auto found = obs_.processes.find(pid);
  // A worker seen just after its exec may not have its libpython mapped yet: read again at rescans, a few times.
  if (found != obs_.processes.end() && rescan && found->second.python && !found->second.root_program &&
      found->second.bases.size() < 2 && maps_reads_[pid] < kMaxMapsReads) {
    ++maps_reads_[pid];
    note_objects(pid, found->second);
  }
  if (found != obs_.processes.end() && !(rescan && pid != root_ && found->second.root_program)) return;
  const std::string exe = exe_of(pid);
  if (pid == root_) root_exe_ = exe;
  ThreadObservations::Process& p = obs_.processes[pid];
  if (found != obs_.processes.end() && exe == p.exe) return;
  const std::string base = exe.substr(exe.rfind('/') + 1);
  p.exe = exe;
  p.root_program = pid == root_ || (!exe.empty() && exe == root_exe_);
  p.python = p.root_program || base.rfind("python", 0) == 0;
  p.bases.clear();
  if (p.python && !p.root_program) note_objects(pid, p);
}

// The load address of each libpython and of the program itself in /proc/PID/maps: its first mapping, at
// file offset 0. Read once per process (after its exec): a GIL in it is found from these after the run.
void ThreadStateSampler::note_objects(pid_t pid, ThreadObservations::Process& p) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/maps", static_cast<int>(pid));
  std::FILE* maps = std::fopen(path, "re");
  if (!maps) return;
  char line[4352];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long long lo = 0, offset = 0;
    int name_at = 0;
    if (std::sscanf(line, "%llx-%*x %*s %llx %*s %*s %n", &lo, &offset, &name_at) < 2 || name_at == 0) continue;
    std::string name(line + name_at);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    if (offset != 0 || name.empty() || name[0] != '/') continue;
    if (name == p.exe || name.find("/libpython") != std::string::npos) p.bases.emplace(name, lo);
  }
  std::fclose(maps);
}

// The thread ids in /proc/PID/task, through a descriptor kept open (getdents from its start) for the
// first kMaxTaskDirs processes.
void ThreadStateSampler::list_threads(pid_t pid, Process& p) {
  ++obs_.misses.listings;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  UniqueFd dir = p.task_dir ? std::move(p.task_dir) : UniqueFd(::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) {
    if (out_of_descriptors(errno)) descriptors_ran_out();
    return;  // gone, or unreadable: its threads as last listed
  }
  std::vector<pid_t> tids;
  alignas(8) char buf[8192];
  bool ok = ::lseek(dir.get(), 0, SEEK_SET) == 0;
  for (long n; ok && (n = ::syscall(SYS_getdents64, dir.get(), buf, sizeof buf)) > 0;) {
    for (long at = 0; at < n;) {
      struct Entry { std::uint64_t ino; std::int64_t off; unsigned short reclen; unsigned char type; char name[1]; };
      const auto* e = reinterpret_cast<const Entry*>(buf + at);
      if (e->name[0] >= '1' && e->name[0] <= '9') tids.push_back(static_cast<pid_t>(std::atol(e->name)));
      at += e->reclen;
    }
  }
  if (!ok || tids.empty()) return;
  // Threads that came and went since the last listing: read every tick for a while.
  if (p.listed_threads > 0)
    for (pid_t tid : tids)
      if (!tracks_.count(tid)) full_rate_until_ = std::max(full_rate_until_, tick_ + kChurnTicks);
  p.tids = std::move(tids);
  p.listed_threads = static_cast<long>(p.tids.size());
  if (p.task_dir || task_dirs_ < kMaxTaskDirs) {
    if (!p.task_dir) ++task_dirs_;
    p.task_dir = std::move(dir);
  }
}

void ThreadStateSampler::sample_process(pid_t pid, long threads, bool rescan, std::int64_t cpu_ns) {
  const std::int64_t t0 = monotonic_ns();
  Process& p = processes_[pid];
  if (threads == 1) {
    p.tids.assign(1, pid);
    p.listed_threads = 1;
  } else if (rescan || threads != p.listed_threads || tick_ < full_rate_until_) {
    list_threads(pid, p);
  }
  note_process(pid, rescan);
  if (cpu_ns >= 0) {
    p.checkpoint_cpu_ns = cpu_ns;
    checkpoints_.push_back(pid);
  }
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

void ThreadStateSampler::process_ended(pid_t pid, std::int64_t cpu_ns) {
  auto p = processes_.find(pid);
  auto o = obs_.processes.find(pid);
  if (p == processes_.end() || o == obs_.processes.end()) return;
  o->second.cpu_ns = cpu_ns;
  o->second.seen_cpu_ns = p->second.seen_cpu_ns;
}

// Descriptors ran out: none is kept open from now on (each read opens and closes its file).
void ThreadStateSampler::descriptors_ran_out() {
  max_with_fds_ = 0;
  for (auto& [tid, t] : tracks_) {
    t.schedstat.reset();
    t.syscall.reset();
  }
  with_fds_ = 0;
}

void ThreadStateSampler::read_thread(Track& t, std::int64_t now_ns) {
  const bool had_fds = static_cast<bool>(t.schedstat);
  UniqueFd sched = had_fds ? std::move(t.schedstat) : open_task_file(t.data.pid, t.data.tid, "schedstat");
  ThreadReading r;
  r.t_ns = now_ns - start_ns_;
  if (!sched || !read_schedstat(sched.get(), r.cpu_ns, r.delay_ns)) {
    const int err = errno;
    if (had_fds) with_fds_ = std::max(0, with_fds_ - 1);
    if (!sched && out_of_descriptors(err)) {
      // Not gone: unread this tick, and said (coverage_why).
      if (!t.missed_fd) ++obs_.misses.fd_threads;
      t.missed_fd = true;
      descriptors_ran_out();
      return;
    }
    if (!sched && err == EACCES && !t.missed_unreadable) {
      ++obs_.misses.unreadable_threads;
      t.missed_unreadable = true;
    }
    t.gone = true;  // exited: its last reading stands
    return;
  }
  UniqueFd sys = had_fds ? std::move(t.syscall) : UniqueFd{};
  // The syscall file is the dearer read (a permission check and the task's registers): not read again for a
  // thread that has not run since its last reading found it blocked (it is blocked there still), nor for
  // one that was on a CPU or queued for one nearly all the time since (it is running).
  const ThreadReading* last = t.data.readings.empty() ? nullptr : &t.data.readings.back();
  if (last && blocked(*last) && last->cpu_ns == r.cpu_ns && last->delay_ns == r.delay_ns) {
    r.syscall = last->syscall;
  } else if (last && 10 * ((r.cpu_ns - last->cpu_ns) + (r.delay_ns - last->delay_ns)) >= 9 * (r.t_ns - last->t_ns)) {
    r.syscall.kind = SyscallReading::Kind::running;
  } else {
    if (!sys) {
      if (max_with_fds_ == 0) sched.reset();  // one descriptor at a time when they ran out
      sys = open_task_file(t.data.pid, t.data.tid, "syscall");
    }
    char buf[256];
    if (sys && read_small(sys.get(), buf, sizeof buf) > 0) r.syscall = parse_syscall(buf);
    else if (!sys && out_of_descriptors(errno) && !t.missed_fd) {
      ++obs_.misses.fd_threads;
      t.missed_fd = true;
    } else if (!t.missed_unreadable) {
      ++obs_.misses.unreadable_threads;
      t.missed_unreadable = true;
    }
  }
  processes_[t.data.pid].seen_cpu_ns += r.cpu_ns - (last ? last->cpu_ns : 0);
  t.data.readings.push_back(r);
  // Kept open for the next tick, for the first kMaxThreadsWithFds threads.
  if (sched && sys && (had_fds || with_fds_ < max_with_fds_)) {
    if (!had_fds) ++with_fds_;
    t.schedstat = std::move(sched);
    t.syscall = std::move(sys);
  } else if (had_fds) {
    with_fds_ = std::max(0, with_fds_ - 1);
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
  obs_.misses.capped_reads += static_cast<long>(n - count);
  obs_.misses.most_due = std::max(obs_.misses.most_due, static_cast<long>(n));
  for (pid_t pid : checkpoints_) {
    const Process& p = processes_[pid];
    ThreadObservations::Process& o = obs_.processes[pid];
    o.cpu_ns = p.checkpoint_cpu_ns;
    o.seen_cpu_ns = p.seen_cpu_ns;
  }
  checkpoints_.clear();
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

// ---- classification, after the run ----

namespace {

constexpr int kMaxThreadsKept = 64;

// One thread's readings → its times and its timeline.
class ThreadAccount {
 public:
  ThreadAccount(ThreadRecord& out, const ProcessGils& gils) : out_(out), gils_(gils) {}

  void add(const ThreadReading& r) {
    if (!prev_) {
      // Its time before the first sight was spent on a CPU or waiting for one (it had just begun).
      out_.start_ns = std::max<std::int64_t>(0, r.t_ns - r.cpu_ns - r.delay_ns);
      out_.times[ThreadState::cpu] += r.cpu_ns;
      out_.times[ThreadState::runqueue] += r.delay_ns;
      segment(out_.start_ns, r.cpu_ns >= r.delay_ns ? ThreadState::cpu : ThreadState::runqueue);
    } else {
      interval(*prev_, r);
    }
    if (blocked(r)) sticky_ = classify_wait(r.syscall, gils_);
    prev_ = &r;
    out_.end_ns = r.t_ns;
  }

 private:
  // The time between two readings: CPU and run-queue deltas are exact; the rest is off the CPU, in what
  // the thread was seen waiting in at either end (half each when the two differ), else in what it last
  // waited in (a thread that ran at both ends, as a GIL's waiters do between their turns). A running
  // thread's counters lag (its CPU time until the scheduler's next tick, its wait for a core until it
  // gets one): what a reading of it took for off-CPU time is provisional, and given back when a later
  // reading's counters show it was CPU or run-queue time after all.
  void interval(const ThreadReading& a, const ThreadReading& b) {
    const std::int64_t cpu = std::max<std::int64_t>(0, b.cpu_ns - a.cpu_ns);
    const std::int64_t delay = std::max<std::int64_t>(0, b.delay_ns - a.delay_ns);
    const std::int64_t dt = b.t_ns - a.t_ns;
    give_back(cpu + delay - dt);
    const std::int64_t off = std::max<std::int64_t>(0, dt - cpu - delay);
    out_.times[ThreadState::cpu] += cpu;
    out_.times[ThreadState::runqueue] += delay;
    ThreadState first = sticky_, second = sticky_;
    if (blocked(b)) first = second = classify_wait(b.syscall, gils_);
    if (blocked(a)) {
      second = classify_wait(a.syscall, gils_);
      if (!blocked(b)) first = second;
    }
    out_.times[first] += off - off / 2;
    out_.times[second] += off / 2;
    if (blocked(b)) {
      provisional_ = ThreadTimes{};  // a blocked thread's counters are up to date
    } else {
      provisional_[first] += off - off / 2;
      provisional_[second] += off / 2;
    }
    ThreadState dominant = first;
    if (cpu >= off && cpu >= delay) dominant = ThreadState::cpu;
    else if (delay >= off) dominant = ThreadState::runqueue;
    segment(a.t_ns, dominant);
  }

  // Takes up to `excess` ns back from the provisional off-CPU time.
  void give_back(std::int64_t excess) {
    for (ThreadState s : kThreadStates) {
      if (excess <= 0) return;
      const std::int64_t taken = std::min(excess, provisional_[s]);
      provisional_[s] -= taken;
      out_.times[s] -= taken;
      excess -= taken;
    }
  }

  void segment(std::int64_t start, ThreadState state) {
    if (out_.timeline.empty() || out_.timeline.back().state != state) out_.timeline.push_back({start, state});
  }

  ThreadRecord& out_;
  const ProcessGils& gils_;
  const ThreadReading* prev_ = nullptr;
  ThreadState sticky_ = ThreadState::other;
  ThreadTimes provisional_;
};

// At most ThreadRecord::kMaxSegments: the thread's life cut into that many equal buckets, each the state
// that covered most of it.
void coarsen(ThreadRecord& t) {
  if (t.timeline.size() <= ThreadRecord::kMaxSegments) return;
  const std::int64_t span = std::max<std::int64_t>(1, t.end_ns - t.timeline.front().start_ns);
  const std::int64_t origin = t.timeline.front().start_ns;
  const std::size_t buckets = ThreadRecord::kMaxSegments;
  std::vector<ThreadTimes> in_bucket(buckets);
  for (std::size_t i = 0; i < t.timeline.size(); ++i) {
    const std::int64_t from = t.timeline[i].start_ns;
    const std::int64_t to = i + 1 < t.timeline.size() ? t.timeline[i + 1].start_ns : t.end_ns;
    for (std::int64_t at = from; at < to;) {
      const std::size_t b = std::min<std::size_t>(buckets - 1, static_cast<std::size_t>((at - origin) * static_cast<std::int64_t>(buckets) / span));
      const std::int64_t bucket_end = origin + (static_cast<std::int64_t>(b) + 1) * span / static_cast<std::int64_t>(buckets);
      const std::int64_t until = std::min(to, std::max(bucket_end, at + 1));
      in_bucket[b][t.timeline[i].state] += until - at;
      at = until;
    }
  }
  std::vector<ThreadSegment> out;
  for (std::size_t b = 0; b < buckets; ++b) {
    ThreadState best = ThreadState::other;
    for (ThreadState s : kThreadStates)
      if (in_bucket[b][s] > in_bucket[b][best]) best = s;
    if (in_bucket[b].lived_ns() == 0) continue;
    if (out.empty() || out.back().state != best)
      out.push_back({origin + static_cast<std::int64_t>(b) * span / static_cast<std::int64_t>(buckets), best});
  }
  t.timeline = std::move(out);
}

}  // namespace

namespace {

// Where the GILs of one process of the run live, from what the runner said of its own (`root`).
ProcessGils gils_of_process(const ThreadObservations::Process& process, const ProcessGils& root,
                            const std::vector<GilReport>& gils, int threads) {
  if (threads == 1) return {true, {}};  // a lone thread never waits for its own GIL
  if (process.root_program) return root;
  // Another program (a spawn or forkserver worker): its main interpreter's GIL where its object is
  // loaded in it, when the runner's is static in an object (libpython, or the program).
  for (const auto& g : gils) {
    if (g.interpreter != 0 || g.object.empty()) continue;
    const auto base = process.bases.find(g.object);
    if (base == process.bases.end()) continue;
    if (!g.has_gil) return {true, {}};  // the same build, with no GIL
    const std::uint64_t lo = base->second + g.object_offset;
    return {true, {{lo, lo + (g.hi - g.lo)}}};
  }
  return {false, {}};
}

std::string with_commas(long n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string seconds(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// thread_states.coverage: the share of the tree's CPU (each process's kernel count at its last
// checkpoint) that threads with a known GIL wait account for, by then; and why the rest was not seen.
void account_coverage(const ThreadObservations& obs, const std::map<pid_t, bool>& located, bool script_interpreters,
                      ThreadStates& out) {
  std::int64_t kernel = 0, seen = 0, unlocated = 0;
  long unlocated_processes = 0;
  for (const auto& [pid, p] : obs.processes) {
    if (p.cpu_ns < 0) continue;
    kernel += p.cpu_ns;
    const auto known = located.find(pid);
    const std::int64_t mine = std::min(p.seen_cpu_ns, p.cpu_ns + 10000000);  // the kernel's count is in 10 ms ticks
    if (known != located.end() && !known->second) {
      unlocated += mine;
      ++unlocated_processes;
    } else {
      seen += mine;
    }
  }
  if (kernel <= 0) return;  // nothing ran long enough to count: not measured
  out.coverage = std::min(1.0, static_cast<double>(seen) / static_cast<double>(kernel));
  const auto& m = obs.misses;
  std::vector<std::string> why;
  if (unlocated > 0 && script_interpreters)
    why.push_back("the script's own subinterpreters: their GILs are not located (" + seconds(unlocated) + " of CPU)");
  else if (unlocated > 0)
    why.push_back("GIL not located in " + with_commas(unlocated_processes) + " process" + (unlocated_processes == 1 ? "" : "es") +
                  " (" + seconds(unlocated) + " of CPU): their GIL wait is unknown");
  if (m.fd_threads > 0 || m.fd_processes > 0)
    why.push_back("descriptors ran out: " + with_commas(m.fd_threads) + " threads and " + with_commas(m.fd_processes) +
                  " processes not read");
  if (m.unreadable_threads > 0) why.push_back("/proc/…/task files unreadable for " + with_commas(m.unreadable_threads) + " threads");
  if (m.capped_reads > 0)
    why.push_back(std::to_string(ThreadStateSampler::kMaxThreadsPerTick) + "-thread cap: up to " + with_commas(m.most_due) +
                  " threads due in one tick, read in turn");
  const std::int64_t missed = kernel - seen - unlocated;
  if (out.coverage < ThreadStates::kMinCoverage && missed > 0)
    why.push_back(seconds(missed) + " of the tree's " + seconds(kernel) + " of CPU ran in threads that lived between two readings (" +
                  with_commas(static_cast<long>(obs.threads.size())) + " threads seen)");
  for (const auto& w : why) out.coverage_why += (out.coverage_why.empty() ? "" : "; ") + w;
}

}  // namespace

ThreadStates classify_threads(const ThreadObservations& obs, const std::vector<GilReport>& gils,
                              const std::string& unlocated_why, const std::vector<pid_t>& not_the_case) {
  ThreadStates out;
  out.interval_ms = obs.interval_ms;
  out.samples = obs.ticks;
  out.cost_ns = obs.cost_ns;
  ProcessGils root_gils;
  root_gils.located = !gils.empty();
  bool script_interpreters = false;  // the script made interpreters: their GILs not located
  for (const auto& g : gils) {
    if (g.interpreter < 0) script_interpreters = true;
    else if (g.has_gil) root_gils.windows.push_back({g.lo, g.hi});
  }
  out.gil = !root_gils.located ? unlocated_why : root_gils.windows.empty() ? "none" : "located";
  if (script_interpreters) root_gils.located = false;

  auto excluded = [&](const ThreadTrack& t) {
    return std::find(not_the_case.begin(), not_the_case.end(), t.tid) != not_the_case.end();
  };
  std::map<pid_t, int> threads_of;
  for (const auto& t : obs.threads) ++threads_of[t.pid];
  std::map<pid_t, ProcessGils> gils_by_pid;
  std::map<pid_t, bool> located;
  for (const auto& [pid, count] : threads_of) {
    const auto found = obs.processes.find(pid);
    const ThreadObservations::Process process = found != obs.processes.end() ? found->second : ThreadObservations::Process{};
    gils_by_pid[pid] = gils_of_process(process, root_gils, gils, count);
    located[pid] = gils_by_pid[pid].located || !process.python;
  }
  for (const auto& t : obs.threads) {
    if (excluded(t)) continue;
    ThreadRecord rec;
    rec.pid = t.pid;
    rec.tid = t.tid;
    rec.name = t.name;
    const auto found = obs.processes.find(t.pid);
    rec.python = found != obs.processes.end() && found->second.python;
    const ProcessGils& process_gils = gils_by_pid[t.pid];
    rec.gil_located = process_gils.located;
    ThreadAccount account(rec, process_gils);
    for (const auto& r : t.readings) account.add(r);
    coarsen(rec);
    if (rec.python) out.python_totals += rec.times;
    if (static_cast<int>(out.threads.size()) < kMaxThreadsKept) out.threads.push_back(std::move(rec));
    else ++out.threads_not_kept;
  }
  account_coverage(obs, located, script_interpreters, out);
  return out;
}

}  // namespace gilhost
