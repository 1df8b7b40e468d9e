#include "measure/thread_states.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "util/paths.hpp"
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

// What a thread's syscall file at `fd` says now; nullopt when it cannot be read (the thread is gone).
std::optional<SyscallReading> read_syscall(int fd) {
  char buf[256];
  if (read_small(fd, buf, sizeof buf) <= 0) return std::nullopt;
  return parse_syscall(buf);
}

std::string read_comm(pid_t pid, pid_t tid) {
  UniqueFd fd = open_task_file(pid, tid, "comm");
  char buf[64];
  if (!fd || read_small(fd.get(), buf, sizeof buf) <= 0) return "";
  std::string name(buf);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}


}  // namespace

// ---- sampling ----

namespace {
bool same_call(const SyscallReading& a, const SyscallReading& b) {
  return a.kind == b.kind && a.number == b.number && a.arg0 == b.arg0 && a.arg1 == b.arg1;
}
}  // namespace

void ProbeTally::add(std::uint8_t index, unsigned n) {
  if (n == 0) return;
  std::size_t slot = kSlots;
  for (std::size_t k = 0; k < kSlots && slot == kSlots; ++k)
    if (count[k] > 0 && call[k] == index) slot = k;
  for (std::size_t k = 0; k < kSlots && slot == kSlots; ++k)
    if (count[k] == 0) slot = k;
  if (slot == kSlots) return;
  n = std::min(n, 255u);
  if (count[slot] + n > 255)
    for (auto& c : count) c = static_cast<std::uint8_t>(c > 0 ? std::max(1, c / 2) : 0);
  call[slot] = index;
  count[slot] = static_cast<std::uint8_t>(std::min(255u, count[slot] + n));
}

void ProbeTally::add(const ProbeTally& other) {
  for (std::size_t k = 0; k < kSlots; ++k) add(other.call[k], other.count[k]);
}

int intern_call(ProbeCalls& calls, const SyscallReading& call) {
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (same_call(calls[i], call)) return static_cast<int>(i);
  if (calls.size() >= 255) return -1;
  calls.push_back(call);
  return static_cast<int>(calls.size() - 1);
}

namespace {
// `r`'s own sight, when it saw the thread blocked, as one more probe of its call in `into`.
void add_sight(ProbeTally& into, const ThreadReading& r, ProbeCalls& calls) {
  if (!reading_blocked(r)) return;
  const int index = intern_call(calls, r.syscall);
  if (index >= 0) into.add(static_cast<std::uint8_t>(index), 1);
}
}  // namespace

bool redundant_reading(const ThreadReading& a, const ThreadReading& b, const ThreadReading& c) {
  return reading_blocked(b) && same_call(a.syscall, b.syscall) && same_call(b.syscall, c.syscall) && counters_still(a, b) && counters_still(b, c);
}

void compact_readings(std::vector<ThreadReading>& r, std::size_t target, ProbeCalls* calls) {
  target = std::max<std::size_t>(target, 2);
  std::vector<std::int64_t> cost, sorted;
  while (r.size() > target) {
    const std::size_t n = r.size();
    cost.assign(n, 0);
    for (std::size_t i = 1; i + 1 < n; ++i) {
      const std::int64_t span = r[i + 1].t_ns - r[i - 1].t_ns;
      const bool same = same_call(r[i - 1].syscall, r[i].syscall) && same_call(r[i].syscall, r[i + 1].syscall);
      cost[i] = same ? span / 2 : span;
    }
    // The cheapest `want` interior readings, as far as no two neighbours go in one pass.
    const std::size_t want = n - target;
    sorted.assign(cost.begin() + 1, cost.end() - 1);
    const std::size_t k = std::min(want, sorted.size()) - 1;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
    const std::int64_t threshold = sorted[k];
    std::size_t kept = 1, dropped = 0;
    bool dropped_last = false;
    for (std::size_t i = 1; i + 1 < n; ++i) {
      dropped_last = !dropped_last && dropped < want && cost[i] <= threshold;
      if (!dropped_last) {
        r[kept++] = r[i];
        continue;
      }
      ++dropped;
      // Its probes, and its own sight, go to the interval it merges into (r[i + 1] is kept: no two
      // neighbours go in one pass).
      if (calls) {
        r[i + 1].probes.add(r[i].probes);
        add_sight(r[i + 1].probes, r[i], *calls);
      }
    }
    r[kept++] = r[n - 1];
    r.resize(kept);
  }
}

std::size_t ThreadStateSampler::readings_cap() const {
  const std::size_t share = kReadingBudget / std::max<std::size_t>(1, tracks_.size());
  std::size_t cap = kMinReadingsPerThread;
  while (cap * 2 <= share && cap < kMaxReadingsPerThread) cap *= 2;
  return cap;
}

// Keeps `r` in `t`'s readings, bounded: a reading that the new one makes redundant is replaced by it (a
// thread blocked all along keeps two readings), and a thread at its cap is compacted to half of it.
void ThreadStateSampler::keep_reading(Track& t, const ThreadReading& r) {
  auto& kept = t.data.readings;
  ++t.data.reads;
  t.read_tick = tick_;
  if (kept.size() >= 2 && redundant_reading(kept[kept.size() - 2], kept.back(), r)) {
    ThreadReading merged = r;
    merged.probes.add(kept.back().probes);
    add_sight(merged.probes, kept.back(), t.data.calls);
    kept.back() = merged;
    return;
  }
  kept.push_back(r);
  const std::size_t cap = readings_cap();
  if (kept.size() < cap) return;
  compact_readings(kept, cap / 2, &t.data.calls);
  if (kept.capacity() > 2 * cap) kept.shrink_to_fit();  // the cap fell as threads came
}

ThreadStateSampler::ThreadStateSampler(pid_t root, std::int64_t start_ns, int interval_ms)
    : root_(root), start_ns_(start_ns), parked_stride_(parked_stride(interval_ms)) {
  obs_.interval_ms = interval_ms;
  obs_.start_ns = start_ns;
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
  const std::string exe = proc_exe(pid);
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
    if (added || (rescan && t.data.reads < 50)) {
      std::string name = read_comm(pid, tid);
      if (!name.empty()) t.data.name = std::move(name);
    }
    if (!parked_not_due(t, cpu_ns >= 0)) due_.push_back(&t);
    else if (idle_tick_) idle_next_read_ = std::min(idle_next_read_, next_due_tick(t));
  }
  obs_.cost_ns += monotonic_ns() - t0;
}

long ThreadStateSampler::parked_stride(int interval_ms) {
  const std::int64_t interval_ns = std::int64_t{std::max(1, interval_ms)} * 1'000'000;
  return std::max<long>(kStride, static_cast<long>((kParkedGapNs + interval_ns - 1) / interval_ns));
}

long ThreadStateSampler::next_due_tick(const Track& t) const {
  if (parked_stride_ <= kStride || !t.parked || t.two_waits || t.read_tick < 0) return tick_;
  return std::max(tick_, t.read_tick + parked_stride_);
}

void ThreadStateSampler::end_idle_tick(bool all_read) {
  if (!all_read || full_rate_tick()) idle_next_read_ = tick_;
  for (const Track* t : due_) idle_next_read_ = std::min(idle_next_read_, next_due_tick(*t));
  idle_quiet_until_ = idle_next_read_;
}

bool ThreadStateSampler::parked_not_due(const Track& t, bool checkpoint) const {
  // At kStride the ticks that read the threads come no more often than that: the default reads as before.
  // A thread seen in two different waits (a sleeper that queues for the GIL) keeps the interval's
  // cadence: how its off-CPU time splits between them is what its readings resolve (next_due_tick).
  if (checkpoint || full_rate_tick()) return false;
  return tick_ < next_due_tick(t);
}

void ThreadStateSampler::process_ended(pid_t pid, std::int64_t cpu_ns) {
  auto p = processes_.find(pid);
  auto o = obs_.processes.find(pid);
  if (p == processes_.end() || o == obs_.processes.end()) return;
  o->second.cpu_ns = cpu_ns;
  o->second.seen_cpu_ns = p->second.seen_cpu_ns;
  o->second.checkpoint_ns = monotonic_ns() - start_ns_;
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

namespace {
// The time a thread running at readings `a` and `b` spent between them off a CPU where its counters say it
// was neither on one nor queued for one, less what the host may have stolen while it ran (measure/steal:
// on a VM whose host steals, a thread that never blocks is short of time too). Not clamped at 0: a running
// thread's counters lag (its current slice's CPU time, up to a scheduler tick; the wait for a core it is
// in), and a lag one interval shows, the next one takes back.
std::int64_t off_unseen(const ThreadReading& a, const ThreadReading& b, const StealSeries& steal) {
  const std::int64_t dt = b.t_ns - a.t_ns, cpu = b.cpu_ns - a.cpu_ns;
  return dt - cpu - (b.delay_ns - a.delay_ns) - steal.stolen_while_running(a.t_ns, b.t_ns, cpu);
}

// Whether a thread never seen in two waits waited where no reading saw it: off a CPU between readings
// that found it running (`unseen_off_ns`) for a tenth of its life or more, and 10 ms or more (more than
// its counters can lag). A GIL waiter whose turns fall on the ticks is read running at every one: on the
// joins workload (3.14.7) a thread's 100 ms of GIL waits, never seen, were named after the lock it was seen
// in later (docs/performance.md, "Waits the ticks do not see"). Probes, at jittered times, see them.
bool waited_unseen(std::int64_t unseen_off_ns, std::int64_t life_ns) {
  constexpr std::int64_t kLagNs = 10'000'000;
  return unseen_off_ns >= kLagNs && 10 * unseen_off_ns >= life_ns;
}
}  // namespace

void ThreadStateSampler::read_thread(Track& t, std::int64_t now_ns) {
  if (idle_tick_ && !t.data.readings.empty() && reading_blocked(t.data.readings.back())) {
    repeat_reading(t, now_ns);
    return;
  }
  const bool had_fds = static_cast<bool>(t.schedstat);
  UniqueFd sched = had_fds ? std::move(t.schedstat) : open_task_file(t.data.pid, t.data.tid, "schedstat");
  ThreadReading r;
  r.t_ns = now_ns - start_ns_;
  if (!sched || !read_schedstat(sched.get(), r.cpu_ns, r.delay_ns)) {
    const int err = errno;
    if (had_fds) with_fds_ = std::max(0, with_fds_ - 1);
    schedstat_unread(t, static_cast<bool>(sched), err);
    return;
  }
  UniqueFd sys = had_fds ? std::move(t.syscall) : UniqueFd{};
  const ThreadReading* last = t.data.readings.empty() ? nullptr : &t.data.readings.back();
  read_call(t, last, r, sched, sys);
  take_reading(t, last, r);
  // Kept open for the next tick, for the first kMaxThreadsWithFds threads.
  if (sched && sys && (had_fds || with_fds_ < max_with_fds_)) {
    if (!had_fds) ++with_fds_;
    t.schedstat = std::move(sched);
    t.syscall = std::move(sys);
  } else if (had_fds) {
    with_fds_ = std::max(0, with_fds_ - 1);
  }
}

// At an idle tick, a thread blocked at its last reading: blocked there since, as begin_tick says.
void ThreadStateSampler::repeat_reading(Track& t, std::int64_t now_ns) {
  ThreadReading r = t.data.readings.back();
  r.t_ns = now_ns - start_ns_;
  r.probes = t.pending;
  t.pending = {};
  t.parked = true;
  keep_reading(t, r);
}

// Its schedstat could not be opened (`opened` false) or read, with `err`: gone, or unread this tick.
void ThreadStateSampler::schedstat_unread(Track& t, bool opened, int err) {
  if (!opened && out_of_descriptors(err)) {
    // Not gone: unread this tick, and said (coverage_why).
    if (!t.missed_fd) ++obs_.misses.fd_threads;
    t.missed_fd = true;
    descriptors_ran_out();
    return;
  }
  if (!opened && err == EACCES && !t.missed_unreadable) {
    ++obs_.misses.unreadable_threads;
    t.missed_unreadable = true;
  }
  t.gone = true;  // exited: its last reading stands
}

// The call `t` is in, into `r` (its counters read): its syscall file is opened into `sys` where needed.
void ThreadStateSampler::read_call(Track& t, const ThreadReading* last, ThreadReading& r, UniqueFd& sched,
                                   UniqueFd& sys) {
  // The syscall file is the dearer read (a permission check and the task's registers): not read again for a
  // thread that has not run since its last reading found it blocked (it is blocked there still), nor for
  // one that was on a CPU or queued for one nearly all the time since (it is running).
  if (last && reading_blocked(*last) && counters_still(*last, r)) {
    r.syscall = last->syscall;
    return;
  }
  if (last && 10 * ((r.cpu_ns - last->cpu_ns) + (r.delay_ns - last->delay_ns)) >= 9 * (r.t_ns - last->t_ns)) {
    r.syscall.kind = SyscallReading::Kind::running;
    return;
  }
  if (!sys) {
    if (max_with_fds_ == 0) sched.reset();  // one descriptor at a time when they ran out
    sys = open_task_file(t.data.pid, t.data.tid, "syscall");
  }
  const std::optional<SyscallReading> now = sys ? read_syscall(sys.get()) : std::nullopt;
  if (now) {
    r.syscall = *now;
  } else if (!sys && out_of_descriptors(errno) && !t.missed_fd) {
    ++obs_.misses.fd_threads;
    t.missed_fd = true;
  } else if (!t.missed_unreadable) {
    ++obs_.misses.unreadable_threads;
    t.missed_unreadable = true;
  }
}

// A new reading `r` of `t` (its last one `last`, if any): its sights counted, and kept.
void ThreadStateSampler::take_reading(Track& t, const ThreadReading* last, ThreadReading& r) {
  processes_[t.data.pid].seen_cpu_ns += r.cpu_ns - (last ? last->cpu_ns : 0);
  // A reading that only repeats the last one (the thread has not run since) is no new sight.
  t.parked = last && reading_blocked(r) && counters_still(*last, r);
  if (reading_blocked(r) && !t.parked) count_sight(t, r.syscall);
  // A thread not yet probed, read running: probed, as a mixed thread, once it waited where no reading saw it.
  if (last && !t.mixed && !reading_blocked(r)) {
    if (!reading_blocked(*last)) t.unseen_off_ns += off_unseen(*last, r, obs_.steal);
    if (waited_unseen(t.unseen_off_ns, r.t_ns - t.data.readings.front().t_ns)) mix(t);
  }
  r.probes = t.pending;
  t.pending = {};
  keep_reading(t, r);
}

void ThreadStateSampler::end_tick() {
  const std::int64_t t0 = monotonic_ns();
  // Every thread due this tick, or kMaxThreadsPerTick of them in turn: a run of thousands of threads
  // then costs each tick a bounded time, and each thread is read every few ticks.
  const std::size_t n = due_.size();
  const std::size_t count = std::min<std::size_t>(n, kMaxThreadsPerTick);
  if (n > 0) {
    const std::int64_t now = t0;
    // The host's steal, for the threads that ran (measure/steal): not on a tick the tree was idle.
    if (!idle_tick_) steal_.read(now - start_ns_, obs_.steal);
    for (std::size_t k = 0; k < count; ++k) read_thread(*due_[(cursor_ + k) % n], now);
    cursor_ = n > count ? (cursor_ + count) % n : 0;
  }
  if (idle_tick_) end_idle_tick(count == n);
  obs_.misses.capped_reads += static_cast<long>(n - count);
  obs_.misses.most_due = std::max(obs_.misses.most_due, static_cast<long>(n));
  for (pid_t pid : checkpoints_) {
    const Process& p = processes_[pid];
    ThreadObservations::Process& o = obs_.processes[pid];
    o.cpu_ns = p.checkpoint_cpu_ns;
    o.seen_cpu_ns = p.seen_cpu_ns;
    o.checkpoint_ns = t0 - start_ns_;
  }
  checkpoints_.clear();
  due_.clear();
  ever_mixed_.erase(std::remove_if(ever_mixed_.begin(), ever_mixed_.end(), [](const Track* t) { return t->gone; }),
                    ever_mixed_.end());
  mixed_.clear();
  for (Track* t : ever_mixed_)
    if (!t->parked && t->syscall && !settled(*t)) mixed_.push_back(t);
  ++obs_.ticks;
  obs_.cost_ns += monotonic_ns() - t0;
}

namespace {
// Whether two blocked calls are likely the same wait: the same call, and for a futex a word within 512
// bytes (a GIL's condition variable and mutex use several words of one structure; a lock is elsewhere).
bool same_wait(const SyscallReading& a, const SyscallReading& b) {
  if (a.kind != b.kind || a.number != b.number) return false;
  if (a.number != SYS_futex) return true;
  const std::uint64_t d = a.arg0 > b.arg0 ? a.arg0 - b.arg0 : b.arg0 - a.arg0;
  return d < 512;
}
}  // namespace

int ThreadStateSampler::add_sights(Track& t, const SyscallReading& call, std::uint32_t n) {
  const int index = intern_call(t.data.calls, call);
  if (index < 0) return index;
  if (t.sights.size() <= static_cast<std::size_t>(index)) t.sights.resize(static_cast<std::size_t>(index) + 1);
  t.sights[static_cast<std::size_t>(index)] += n;
  return index;
}

void ThreadStateSampler::mix(Track& t) {
  t.mixed = true;
  ever_mixed_.push_back(&t);
  if (t.last_wait.kind != SyscallReading::Kind::unreadable) add_sights(t, t.last_wait, t.early_sights);
}

// Counted by call once the thread is mixed (the sights before were all like its last wait); until then, only
// how many (most threads never mix: nothing per call kept for them).
int ThreadStateSampler::count_sight(Track& t, const SyscallReading& call) {
  // Mixed: seen in a second wait, or in the same one again after it ran (a reading that is not parked, the
  // only kind that counts a sight before the thread mixes). A thread cycling between a CPU and one wait may
  // have another too short or rare for the ticks to see (a lock convoy's thread on 3.14.7, 7 % of its time
  // off a CPU in the lock, was seen in the GIL alone at every tick); probes bound it (settled()).
  const bool seen_before = t.last_wait.kind != SyscallReading::Kind::unreadable;
  if (seen_before && !same_wait(t.last_wait, call)) t.two_waits = true;
  if (!t.mixed && seen_before) mix(t);
  t.last_wait = call;
  if (!t.mixed) {
    ++t.early_sights;
    return -1;
  }
  return add_sights(t, call, 1);
}

// Whether every group of like waits (same_wait) has its share of the thread's sights known to
// kProbePrecision.
bool ThreadStateSampler::settled(const Track& t) {
  constexpr std::size_t kMaxGroups = 16;  // more kinds of wait than that: not judged, probed on
  const ProbeCalls& calls = t.data.calls;
  std::array<std::size_t, kMaxGroups> first{};  // each group's first call (no allocation: every tick)
  std::array<double, kMaxGroups> groups{};
  std::size_t used = 0;
  double n = 0;
  for (std::size_t i = 0; i < t.sights.size(); ++i) {
    std::size_t g = 0;
    while (g < used && !same_wait(calls[first[g]], calls[i])) ++g;
    if (g == used) {
      if (used == kMaxGroups) return false;
      first[used++] = i;
    }
    groups[g] += t.sights[i];
    n += t.sights[i];
  }
  if (n < 2) return false;
  for (std::size_t g = 0; g < used; ++g) {
    const double p = groups[g] / n;
    if (p * (1 - p) / n > kProbePrecision * kProbePrecision) return false;
  }
  // A wait never seen counts half a sight, so that it too is bounded: a thread seen in one wait alone is
  // settled after ~47 sights.
  const double unseen = 0.5 / (n + 0.5);
  return unseen * (1 - unseen) / n <= kProbePrecision * kProbePrecision;
}

std::int64_t ThreadStateSampler::next_probe_gap_ns(std::int64_t now_ns) {
  if (mixed_.empty()) return 0;
  const std::int64_t age = now_ns - start_ns_;
  const std::int64_t gap = std::max(kMinProbeGapNs, age / kProbesPerAge);
  const long stride = full_rate_tick() ? 1 : kStride;
  if (gap >= stride * static_cast<std::int64_t>(obs_.interval_ms) * 1000000) return 0;
  jitter_state_ ^= jitter_state_ << 13;
  jitter_state_ ^= jitter_state_ >> 7;
  jitter_state_ ^= jitter_state_ << 17;
  const double u = static_cast<double>(jitter_state_ >> 11) / 9007199254740992.0;  // [0, 1)
  return static_cast<std::int64_t>(static_cast<double>(gap) * (0.5 + u));
}

// Each mixed thread's syscall file (kept open), and what it saw blocked added to the thread's pending tally.
void ThreadStateSampler::probe() {
  const std::int64_t t0 = monotonic_ns();
  const std::size_t n = mixed_.size();
  const std::size_t count = std::min<std::size_t>(n, kMaxProbesPerWake);
  for (std::size_t k = 0; k < count; ++k) {
    Track& t = *mixed_[(probe_cursor_ + k) % n];
    const std::optional<SyscallReading> call = t.gone || !t.syscall ? std::nullopt : read_syscall(t.syscall.get());
    if (!call || !call_blocked(*call)) continue;
    const int index = count_sight(t, *call);
    if (index >= 0) t.pending.add(static_cast<std::uint8_t>(index), 1);
  }
  probe_cursor_ = n > count ? (probe_cursor_ + count) % n : 0;
  ++obs_.probes;
  obs_.cost_ns += monotonic_ns() - t0;
}

ThreadObservations ThreadStateSampler::take() {
  if (!obs_.steal.points.empty()) steal_.read(monotonic_ns() - start_ns_, obs_.steal, true);
  obs_.steal.close();
  mixed_.clear();  // they point into tracks_, cleared below
  ever_mixed_.clear();
  obs_.threads.clear();
  for (auto& [tid, t] : tracks_) {
    if (t.data.readings.empty()) continue;
    t.data.probes_after_last = t.pending;
    obs_.threads.push_back(std::move(t.data));
  }
  tracks_.clear();
  return std::move(obs_);
}

}  // namespace gilhost
