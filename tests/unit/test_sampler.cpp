// measure/sampler: /proc/PID/stat parsing and the process-tree sampler on a real forked tree.
#include <catch2/catch.hpp>

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "helpers.hpp"
#include "measure/sampler.hpp"
#include "run/run_cgroup.hpp"

using gilhost::ProcStat;

TEST_CASE("parse_proc_stat: this process's own /proc/self/stat", "[sampler]") {
  ProcStat st;
  REQUIRE(gilhost::parse_proc_stat(gilhost_test::slurp("/proc/self/stat"), st));
  CHECK(st.pid == ::getpid());
  CHECK(st.ppid == ::getppid());
  CHECK(st.pgrp == ::getpgrp());
  CHECK(st.state == 'R');
  CHECK(st.threads >= 1);
  CHECK(st.rss_pages > 0);
}

TEST_CASE("parse_proc_stat: a command name with spaces and parentheses", "[sampler]") {
  // Fields 3.. as in proc(5): state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
  // utime(14) stime(15) cutime cstime priority nice num_threads(20) itreal starttime vsize rss(24) ...
  const std::string line =
      "4321 (a) b (c) S 9) R 77 4300 4300 0 -1 4194304 120 0 3 0 1234 567 0 0 20 0 5 0 98765 1000000 2048 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
  ProcStat st;
  REQUIRE(gilhost::parse_proc_stat(line, st));
  CHECK(st.pid == 4321);
  CHECK(st.state == 'R');
  CHECK(st.ppid == 77);
  CHECK(st.pgrp == 4300);
  CHECK(st.utime_ticks == 1234);
  CHECK(st.stime_ticks == 567);
  CHECK(st.threads == 5);
  CHECK(st.rss_pages == 2048);
  CHECK(st.processor == 0);
}

TEST_CASE("parse_proc_stat: the CPU a process last ran on (field 39)", "[sampler]") {
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);  // this thread, the process's main one
    ProcStat st, read;
    const bool parsed = gilhost::parse_proc_stat(gilhost_test::slurp("/proc/self/stat"), st);
    const bool was_read = gilhost::read_proc_stat(::getpid(), read);  // as run/child reads a child's
    ::sched_setaffinity(0, sizeof allowed, &allowed);
    REQUIRE(parsed);
    REQUIRE(was_read);
    CHECK(st.processor == cpu);
    CHECK(read.processor == cpu);
  }
  ProcStat gone;
  CHECK_FALSE(gilhost::read_proc_stat(0x7ffffff0, gone));  // no such process
  // Text that stops after rss but before the processor: read, with the processor unknown.
  ProcStat cut;
  REQUIRE(gilhost::parse_proc_stat("4321 (x) S 1 4321 4321 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 1000 300 7 7", cut));
  CHECK(cut.rss_pages == 300);
  CHECK(cut.processor == -1);
}

TEST_CASE("parse_proc_stat: rejects cut or malformed text", "[sampler]") {
  ProcStat st;
  CHECK_FALSE(gilhost::parse_proc_stat("", st));
  CHECK_FALSE(gilhost::parse_proc_stat("4321 no parentheses S 1 2 3", st));
  CHECK_FALSE(gilhost::parse_proc_stat("4321 )backwards( S 1 2 3", st));
  // Stops before field 24 (rss).
  CHECK_FALSE(gilhost::parse_proc_stat("4321 (x) S 1 4321 4321 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 1000", st));
}

namespace {

// Touches `bytes` of fresh anonymous memory page by page, so it is resident.
void touch_memory(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) ::_exit(90);
  volatile char* c = static_cast<volatile char*>(p);
  for (std::size_t i = 0; i < bytes; i += 4096) c[i] = 1;
}

bool read_exact(int fd, void* buf, std::size_t n) {
  char* out = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, out, n);
    if (r <= 0) return false;
    out += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// Closes our ends of the child's pipes (EOF: it is done) and reaps it: it must have exited with 0.
void close_and_reap(pid_t pid, int to_child, int from_child) {
  ::close(to_child);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  ::close(from_child);
}

}  // namespace

TEST_CASE("TreeSampler: a forked tree that allocates and spawns", "[sampler]") {
  constexpr std::size_t kAlloc = 64u << 20;
  int to_child[2], from_child[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(from_child) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The root: its own process group, like a run.
    ::setpgid(0, 0);
    ::close(to_child[1]);
    ::close(from_child[0]);
    char go = 0;
    if (::write(from_child[1], "r", 1) != 1 || !read_exact(to_child[0], &go, 1)) ::_exit(91);
    touch_memory(kAlloc);
    pid_t kids[2];
    for (int k = 0; k < 2; ++k) {
      kids[k] = ::fork();
      if (kids[k] == 0) {
        if (k == 1) ::setsid();  // left the group: still in the tree through its parent
        for (;;) ::pause();
      }
    }
    if (::write(from_child[1], kids, sizeof kids) != static_cast<ssize_t>(sizeof kids)) ::_exit(92);
    char done = 0;
    ssize_t ignored = ::read(to_child[0], &done, 1);  // EOF: the test is finished with us
    (void)ignored;
    for (pid_t k : kids) {
      ::kill(k, SIGKILL);
      ::waitpid(k, nullptr, 0);
    }
    ::_exit(0);
  }
  ::setpgid(pid, pid);
  ::close(to_child[0]);
  ::close(from_child[1]);

  char ready = 0;
  REQUIRE(read_exact(from_child[0], &ready, 1));
  gilhost::TreeSampler sampler(pid, 1);
  sampler.sample();
  REQUIRE(sampler.sample_count() == 1);
  const auto before = sampler.samples()[0];
  CHECK(before.processes == 1);
  CHECK(before.rss_bytes > 0);
  CHECK(before.root_rss_bytes == before.rss_bytes);

  REQUIRE(::write(to_child[1], "g", 1) == 1);
  pid_t kids[2] = {0, 0};
  REQUIRE(read_exact(from_child[0], kids, sizeof kids));
  sampler.sample();
  sampler.sample();

  CHECK(sampler.sample_count() == 3);
  CHECK(sampler.peak_processes() == 3);
  CHECK(sampler.peak_threads() >= 3);
  CHECK(sampler.peak_root_rss_bytes() - before.root_rss_bytes >= static_cast<std::int64_t>(kAlloc * 9 / 10));
  CHECK(sampler.peak_rss_bytes() > sampler.peak_root_rss_bytes());  // the grandchildren count too

  std::vector<pid_t> live = sampler.live_members();
  std::sort(live.begin(), live.end());
  std::vector<pid_t> expected{kids[0], kids[1]};
  std::sort(expected.begin(), expected.end());
  CHECK(live == expected);

  const gilhost::TreeSummary summary = sampler.summary();
  CHECK(summary.samples == 3);
  CHECK(summary.peak_processes == 3);
  CHECK(summary.peak_tree_rss_bytes == sampler.peak_rss_bytes());
  REQUIRE(summary.timeline.size() == 3);
  CHECK(summary.timeline[0].processes == 1);  // processes at the first sample

  close_and_reap(pid, to_child[1], from_child[0]);

  // Everything has exited: nothing is left behind, and later samples record nothing.
  CHECK(sampler.live_members().empty());
  sampler.sample();
  CHECK(sampler.sample_count() == 3);
}

TEST_CASE("TreeSampler: summary downsamples but keeps the peak", "[sampler]") {
  gilhost::TreeSampler sampler(::getpid(), 1000);
  for (int i = 0; i < 50; ++i) sampler.sample();
  REQUIRE(sampler.sample_count() == 50);
  const gilhost::TreeSummary summary = sampler.summary(10);
  CHECK(summary.samples == 50);
  CHECK(summary.timeline.size() <= 10);
  double peak = 0;
  for (const auto& point : summary.timeline) peak = std::max(peak, point.tree_rss_bytes);
  CHECK(peak == static_cast<double>(sampler.peak_rss_bytes()));
  CHECK(sampler.peak_processes() >= 1);
}

TEST_CASE("TreeSampler: the fast ticks (statm, task links) agree with the full stat reads", "[sampler]") {
  // A child that sleeps, then becomes a zombie; one full read, then fast ones only.
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(go[1]);
    char c = 0;
    ssize_t ignored = ::read(go[0], &c, 1);
    (void)ignored;
    ::_exit(0);
  }
  ::close(go[0]);
  // Blocked on the pipe before it is read: till then a forked child still faults pages in (beside two busy
  // loops, for long enough that the two reads saw 700 and 870 KB).
  ProcStat st;
  for (int i = 0; i < 1000 && !(gilhost::parse_proc_stat(gilhost_test::slurp("/proc/" + std::to_string(pid) + "/stat"), st) &&
                                st.state == 'S');
       ++i)
    ::usleep(5000);
  REQUIRE(st.state == 'S');
  gilhost::TreeSampler sampler(pid, 1000, 0, 1000);
  sampler.sample();  // full
  sampler.sample();  // fast
  REQUIRE(sampler.sample_count() == 2);
  const auto& full = sampler.samples()[0];
  const auto& fast = sampler.samples()[1];
  CHECK(fast.processes == 1);
  CHECK(fast.threads == full.threads);
  CHECK(fast.rss_bytes > 0);
  CHECK(fast.rss_bytes == Approx(static_cast<double>(full.rss_bytes)).epsilon(0.2));
  ::close(go[1]);  // the child exits: a zombie until reaped, then gone
  for (int i = 0; i < 200; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
    ::usleep(5000);
  }
  sampler.sample();  // a zombie: not counted
  CHECK(sampler.sample_count() == 2);
  ::waitpid(pid, nullptr, 0);
  sampler.sample();  // gone
  CHECK(sampler.sample_count() == 2);
}

namespace {
// One tick every 10 ms for `ticks` ticks; how many of them found the tree idle (nothing read).
std::size_t idle_ticks(gilhost::TreeSampler& sampler, int ticks) {
  const std::size_t before = sampler.idle_sample_count();
  for (int i = 0; i < ticks; ++i) {
    ::usleep(10000);
    sampler.sample();
  }
  return sampler.idle_sample_count() - before;
}
}  // namespace

namespace {
// Whether the session's cgroup could be made, said when not: it takes root or a delegated cgroup (CI runs
// as root); without one the sampler reads the tree as it did before the cgroup.
bool have_session_cgroup() {
  const gilhost::RunCgroup& cgroup = gilhost::RunCgroup::session();
  if (!cgroup.active()) WARN("no cgroup v2 here: " << cgroup.why_not());
  return cgroup.active();
}

constexpr std::size_t kAlloc = 64u << 20;

// A child that does what it is told on `to_child` ('a': allocate kAlloc; 's': spin 400 ms; anything else:
// nothing), then says so on `from_child`. With `cgroup`, it first joins it (as a run's child does) and
// says "r".
pid_t ordered_child(int to_child[2], int from_child[2], const gilhost::RunCgroup* cgroup) {
  const pid_t pid = ::fork();
  if (pid != 0) {
    ::close(to_child[0]);
    ::close(from_child[1]);
    return pid;
  }
  ::close(to_child[1]);
  ::close(from_child[0]);
  if (cgroup && (::write(cgroup->procs_fd(), "0", 1) != 1 || ::write(from_child[1], "r", 1) != 1)) ::_exit(91);
  for (char order = 0; read_exact(to_child[0], &order, 1);) {
    if (order == 'a') touch_memory(kAlloc);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
    while (order == 's' && std::chrono::steady_clock::now() < until) {
    }
    if (::write(from_child[1], "d", 1) != 1) ::_exit(92);
  }
  ::_exit(0);
}

// After an idle stretch: the child allocates, then blocks again, and the next tick reads the growth; it
// spins 400 ms, and is read at (nearly) every tick, even beside two busy loops on two cores.
void check_growth_and_spin_read(gilhost::TreeSampler& sampler, int to_child, int from_child) {
  const std::int64_t before = sampler.samples().back().root_rss_bytes;
  char reply = 0;
  REQUIRE(::write(to_child, "a", 1) == 1);
  REQUIRE(read_exact(from_child, &reply, 1));
  idle_ticks(sampler, 1);
  CHECK(sampler.samples().back().root_rss_bytes - before >= static_cast<std::int64_t>(kAlloc * 9 / 10));
  REQUIRE(::write(to_child, "s", 1) == 1);
  CHECK(idle_ticks(sampler, 20) <= 10);
  REQUIRE(read_exact(from_child, &reply, 1));
}
}  // namespace

TEST_CASE("TreeSampler: an idle tree is left unread; one that runs or grows is read", "[sampler][cgroup]") {
  if (!have_session_cgroup()) return;
  const gilhost::RunCgroup& cgroup = gilhost::RunCgroup::session();
  CHECK_FALSE(cgroup.holds(::getpid()));  // not in it: never watched through it
  int to_child[2], from_child[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(from_child) == 0);
  const pid_t pid = ordered_child(to_child, from_child, &cgroup);
  REQUIRE(pid >= 0);
  char reply = 0;
  REQUIRE(read_exact(from_child[0], &reply, 1));
  REQUIRE(cgroup.holds(pid));
  gilhost::UniqueFd cpu_stat = cgroup.open_for_reading("cpu.stat");
  REQUIRE(cpu_stat);
  gilhost::TreeSampler sampler(pid, 5, 0, 50);
  sampler.sample_threads(10);
  sampler.watch_tree_cpu(std::move(cpu_stat), 3);
  sampler.sample();
  ::usleep(20000);  // past what the child still did after it said it was ready
  sampler.sample();

  // Blocked on the pipe: at most 3 ticks in a row unread, then one read (after the ticks that see it
  // idle: the first 4 do not ask, and one that found it running leaves cpu.stat unread for 1 to 8 more).
  idle_ticks(sampler, 16);
  const std::size_t idle = idle_ticks(sampler, 12);
  CHECK(idle >= 8);
  CHECK(idle <= 9);
  CHECK(sampler.sample_count() == 30);  // an unread tick keeps its sample all the same
  // Its thread's state is taken at the unread ticks too (from memory: blocked in the same read), so the
  // idle stretch has readings at its ends, not one long interval closed by the thread's exit.
  const gilhost::ThreadObservations seen = sampler.take_thread_observations();
  const auto child = std::find_if(seen.threads.begin(), seen.threads.end(), [&](const auto& t) { return t.tid == pid; });
  REQUIRE(child != seen.threads.end());
  REQUIRE_FALSE(child->readings.empty());
  CHECK(child->readings.back().syscall.number == SYS_read);
  CHECK(child->readings.back().t_ns >= sampler.samples().back().t_ns - 35000000);
  check_growth_and_spin_read(sampler, to_child[1], from_child[0]);
  close_and_reap(pid, to_child[1], from_child[0]);
}

// Below 10 ms a tick, the kernel's switch records tell an idle tree (measure/switch_watch); no cgroup needed.
TEST_CASE("sampler: a tree none of whose threads ran since the last tick is not read (switch records)",
          "[sampler][switch_watch]") {
  int to_child[2], from_child[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(from_child) == 0);
  const pid_t pid = ordered_child(to_child, from_child, nullptr);
  REQUIRE(pid >= 0);
  std::string why_not;
  auto watch = gilhost::SwitchWatch::start(pid, why_not);
  if (!watch) {
    WARN("switch records not allowed here: " << why_not);
    close_and_reap(pid, to_child[1], from_child[0]);
    return;
  }
  gilhost::TreeSampler sampler(pid, 5, 0, 50);
  sampler.sample_threads(1);
  sampler.watch_switches(std::move(watch), 3);
  char reply = 0;
  REQUIRE(::write(to_child[1], "n", 1) == 1);  // it runs (its records say where it is), then blocks
  REQUIRE(read_exact(from_child[0], &reply, 1));
  ::usleep(20000);
  sampler.sample();

  // Blocked on the pipe: 3 ticks in a row unread, then one read.
  const std::size_t idle = idle_ticks(sampler, 12);
  CHECK(idle == 9);
  CHECK(sampler.sample_count() == 13);  // an unread tick keeps its sample all the same
  check_growth_and_spin_read(sampler, to_child[1], from_child[0]);
  close_and_reap(pid, to_child[1], from_child[0]);
}

namespace {
// A child of this process that joins the session's cgroup, as a run's child does, then waits for its
// pipe to close; its pid.
pid_t child_in_cgroup(const gilhost::RunCgroup& cgroup, int& hold_fd) {
  int fds[2], ready[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[1]);
    ::close(ready[0]);
    if (::write(cgroup.procs_fd(), "0", 1) != 1 || ::write(ready[1], "r", 1) != 1) ::_exit(91);
    char c;
    while (::read(fds[0], &c, 1) > 0) {
    }
    ::_exit(0);
  }
  ::close(fds[0]);
  ::close(ready[1]);
  char c = 0;
  REQUIRE(read_exact(ready[0], &c, 1));
  ::close(ready[0]);
  hold_fd = fds[1];
  return pid;
}
}  // namespace

TEST_CASE("TreeSampler: with the run's cgroup, a rescan finds its processes in cgroup.procs", "[sampler][cgroup]") {
  if (!have_session_cgroup()) return;
  const gilhost::RunCgroup& cgroup = gilhost::RunCgroup::session();
  // Two children in the cgroup: the root, and one that is neither its descendant nor in its process group,
  // which only the cgroup can tell belongs to the run.
  int hold_root = -1, hold_other = -1;
  const pid_t root = child_in_cgroup(cgroup, hold_root);
  const pid_t other = child_in_cgroup(cgroup, hold_other);
  auto members_seen = [&](bool through_cgroup) {
    gilhost::TreeSampler sampler(root, 1);
    if (through_cgroup) sampler.find_members_in(cgroup.open_for_reading("cgroup.procs"));
    sampler.sample();
    return sampler.live_members();
  };
  const std::vector<pid_t> with = members_seen(true), without = members_seen(false);
  CHECK(std::find(with.begin(), with.end(), other) != with.end());
  CHECK(std::find(without.begin(), without.end(), other) == without.end());
  CHECK(std::find(with.begin(), with.end(), ::getpid()) == with.end());  // not in it
  // The second child holds a copy of the first one's pipe (it was forked after): ended first.
  for (auto [pid, fd] : {std::pair{other, hold_other}, std::pair{root, hold_root}}) {
    ::close(fd);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
  }
}
