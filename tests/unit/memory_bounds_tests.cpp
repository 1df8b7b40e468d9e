// Memory bounded in a run's length (issue 25 item 8) and what a killed writer leaves (item 9): the
// thread-state sampler's compaction of a thread's readings, and stale temporaries of AtomicFile.
#include <catch2/catch.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "measure/thread_states.hpp"
#include "syscall_readings.hpp"
#include "util/atomic_file.hpp"
#include "util/temp_dir.hpp"

using gilhost::SyscallReading;
using gilhost::ThreadReading;
using gilhost::ThreadState;
using gilhost_test::in_call;

namespace {

// A thread of a GIL-bound run: each 3 ms it ran, waited for a core, waited for the GIL (seen there or
// not), or slept, at random; its counters as the kernel would count them.
std::vector<ThreadReading> contended_thread(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<ThreadReading> out;
  ThreadReading r;
  for (std::size_t k = 0; k < count; ++k) {
    r.t_ns += 3000000;
    const unsigned what = rng() % 4;
    const std::int64_t ran = what == 0 ? 3000000 : static_cast<std::int64_t>(rng() % 1000000);
    r.cpu_ns += ran;
    r.delay_ns += what == 1 ? 3000000 - ran : 0;
    r.syscall = what == 2 ? in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE)
                : what == 3 ? in_call(SYS_clock_nanosleep, 1, 0)
                            : SyscallReading{SyscallReading::Kind::running, -1, 0, 0};
    out.push_back(r);
  }
  return out;
}

gilhost::ThreadStates classify(const std::vector<ThreadReading>& readings) {
  gilhost::ThreadObservations obs;
  obs.interval_ms = 1;
  obs.root = 100;
  obs.processes[100] = {true, true};
  obs.threads.push_back({100, 101, "t", readings});
  obs.threads.push_back({100, 102, "other", {}});  // two threads: the GIL is told apart
  obs.threads.back().readings = {readings.front(), readings.back()};
  return gilhost::classify_threads(obs, {{true, 1000, 1256}}, "");
}

}  // namespace

TEST_CASE("compact_readings: bounds a thread's readings and keeps its CPU, run-queue and lived time exact",
          "[thread_states][memory]") {
  const auto full = contended_thread(20000, 7);
  auto compact = full;
  gilhost::compact_readings(compact, 512);
  REQUIRE(compact.size() <= 512);
  CHECK(compact.size() >= 256);  // it stops near its target, not far below
  CHECK(compact.front().t_ns == full.front().t_ns);
  CHECK(compact.back().t_ns == full.back().t_ns);
  const auto a = classify(full), b = classify(compact);
  REQUIRE(a.threads.size() == 2);
  REQUIRE(b.threads.size() == 2);
  const gilhost::ThreadRecord& x = a.threads[0];
  const gilhost::ThreadRecord& y = b.threads[0];
  CHECK(y.start_ns == x.start_ns);
  CHECK(y.end_ns == x.end_ns);
  CHECK(y.times.lived_ns() == x.times.lived_ns());
  CHECK(y.times[ThreadState::cpu] == x.times[ThreadState::cpu]);
  CHECK(y.times[ThreadState::runqueue] == x.times[ThreadState::runqueue]);
  // The off-CPU split is as at a coarser interval: still mostly the same waits.
  CHECK(y.times.share(ThreadState::gil) == Approx(x.times.share(ThreadState::gil)).margin(0.05));
  CHECK(y.times.share(ThreadState::sleep) == Approx(x.times.share(ThreadState::sleep)).margin(0.05));
  // The timeline agrees with the totals: its segments cover the thread's life.
  REQUIRE_FALSE(y.timeline.empty());
  CHECK(y.timeline.front().start_ns == y.start_ns);
  // Compacting again (the cap falls as threads come) stays within its target.
  gilhost::compact_readings(compact, 64);
  CHECK(compact.size() <= 64);
  CHECK(classify(compact).threads[0].times[ThreadState::cpu] == x.times[ThreadState::cpu]);
}

TEST_CASE("redundant_reading: a thread blocked all along needs only its ends", "[thread_states][memory]") {
  ThreadReading a, b, c;
  a.t_ns = 0;
  b.t_ns = 10;
  c.t_ns = 20;
  a.cpu_ns = b.cpu_ns = c.cpu_ns = 5;
  a.syscall = b.syscall = c.syscall = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  CHECK(gilhost::redundant_reading(a, b, c));
  c.cpu_ns = 6;  // it ran after b: b says when
  CHECK_FALSE(gilhost::redundant_reading(a, b, c));
  c.cpu_ns = 5;
  c.syscall.arg0 = 2200;  // another futex
  CHECK_FALSE(gilhost::redundant_reading(a, b, c));
  a.syscall = b.syscall = c.syscall = SyscallReading{SyscallReading::Kind::running, -1, 0, 0};
  CHECK_FALSE(gilhost::redundant_reading(a, b, c));  // queued, not blocked: kept
}

TEST_CASE("the sampler's readings of a long-blocked thread stay bounded", "[thread_states][memory]") {
  // This process's own thread, blocked in a read for many ticks: its readings do not grow with them.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t tid = 0;
  std::thread reader([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    char c;
    (void)!::read(fds[0], &c, 1);
  });
  while (tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gilhost::ThreadStateSampler sampler(::getpid(), 0, 1);
  for (long tick = 0; tick < 3000; ++tick) {
    sampler.begin_tick(tick);
    sampler.sample_process(::getpid(), 2, tick == 0);
    sampler.end_tick();
  }
  (void)!::write(fds[1], "x", 1);
  reader.join();
  ::close(fds[0]);
  ::close(fds[1]);
  const auto obs = sampler.take();
  const auto found = std::find_if(obs.threads.begin(), obs.threads.end(), [&](const auto& t) { return t.tid == tid; });
  REQUIRE(found != obs.threads.end());
  CHECK(found->readings.size() <= 4);  // 3,000 ticks, one wait
  for (const auto& t : obs.threads) CHECK(t.readings.size() <= gilhost::ThreadStateSampler::kMaxReadingsPerThread);
}

TEST_CASE("AtomicFile removes the temporaries a killed writer of the same file left", "[util][memory]") {
  namespace fs = std::filesystem;
  gilhost::TempDir dir(fs::temp_directory_path().string(), "gilhost-stale");
  const fs::path folder(dir.path());
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);  // its pid names no process now
  auto touch = [&](const std::string& name) { std::ofstream(folder / name) << "half"; };
  const std::string dead = std::to_string(child), alive = std::to_string(::getpid());
  touch(".x.html.tmp." + dead + ".Ab12Cd");      // a killed writer's: removed
  touch(".x.html.tmp." + alive + ".Ef34Gh");     // a live writer's: kept
  touch(".x.html.tmp.Ij56Kl");                   // no pid, fresh: kept
  touch(".x.html.tmp.Mn78Op");                   // no pid, old: removed
  fs::last_write_time(folder / ".x.html.tmp.Mn78Op", fs::file_time_type::clock::now() - std::chrono::hours(2));
  touch(".y.html.tmp." + dead + ".Qr90St");      // another file's: not this writer's to remove
  touch("x.html.tmp." + dead + ".Uv12Wx");       // not hidden: not a temporary of ours
  {
    gilhost::AtomicFile f((folder / "x.html").string());
    CHECK(fs::path(f.temporary()).filename().string().rfind(".x.html.tmp." + alive + ".", 0) == 0);
    f.write("<html>");
    f.commit();
  }
  CHECK(fs::exists(folder / "x.html"));
  CHECK_FALSE(fs::exists(folder / (".x.html.tmp." + dead + ".Ab12Cd")));
  CHECK(fs::exists(folder / (".x.html.tmp." + alive + ".Ef34Gh")));
  CHECK(fs::exists(folder / ".x.html.tmp.Ij56Kl"));
  CHECK_FALSE(fs::exists(folder / ".x.html.tmp.Mn78Op"));
  CHECK(fs::exists(folder / (".y.html.tmp." + dead + ".Qr90St")));
  CHECK(fs::exists(folder / ("x.html.tmp." + dead + ".Uv12Wx")));
}
