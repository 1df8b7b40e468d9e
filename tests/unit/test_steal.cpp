// The host's steal (measure/steal): /proc/stat's column parsed, the series' shares between readings, and
// classify_threads giving a running thread the time the host took from it as CPU time, not a wait.
#include <catch2/catch.hpp>

#include "measure/steal.hpp"
#include "measure/thread_states.hpp"

using gilhost::StealSeries;
using gilhost::ThreadState;

namespace {
constexpr std::int64_t kMs = 1000000;
}

TEST_CASE("steal: /proc/stat's first line, in clock ticks, as ns", "[steal]") {
  const auto t = gilhost::parse_stat_times("cpu  100 3 50 1000 5 4 2 7 0 0\ncpu0 50 0 25 500 2 0 1 4 0 0\n", 100);
  REQUIRE(t);
  CHECK(t->steal_ns == 70 * kMs);
  CHECK(t->busy_ns == (100 + 3 + 50 + 4 + 2) * 10 * kMs);  // user, nice, system, irq, softirq: not idle or iowait
  CHECK(gilhost::parse_stat_times("cpu  100 0 50 1000 5 0 2 0 0 0\n", 100)->steal_ns == 0);
  CHECK_FALSE(gilhost::parse_stat_times("cpu  100 0 50 1000 5 0 2\n", 100));  // a kernel with no steal column
  CHECK_FALSE(gilhost::parse_stat_times("intr 5 6 7 8 9 10 11 12\n", 100));
  CHECK_FALSE(gilhost::parse_stat_times("cpu  1 2 3 4 5 6 7 8\n", 0));
}

namespace {
// One CPU at work from 0 to `end_ms`, read every 10 ms; from `burst_from` to `burst_to` ms the host takes
// `burst_share` of it, elsewhere `base_share`.
StealSeries one_busy_cpu(std::int64_t end_ms, std::int64_t burst_from, std::int64_t burst_to, double burst_share,
                         double base_share = 0) {
  StealSeries s;
  s.cpus = 2;
  gilhost::StatTimes t;
  for (std::int64_t ms = 0; ms <= end_ms; ms += 10) {
    s.add(ms * kMs, t);
    const double share = ms >= burst_from && ms < burst_to ? burst_share : base_share;
    t.steal_ns += static_cast<std::int64_t>(10 * kMs * share);
    t.busy_ns += static_cast<std::int64_t>(10 * kMs * (1 - share));
  }
  s.close();
  return s;
}
}  // namespace

TEST_CASE("steal: what a running thread lost, over a window of a second around it, above a floor", "[steal]") {
  // A fifth of the working CPU taken for half a second, from 1.0 s.
  const StealSeries s = one_busy_cpu(3000, 1000, 1500, 0.2);
  // An interval in the burst: the second around it holds 100 ms stolen of 1,000 ms wanted.
  CHECK(s.running_share(1200 * kMs, 1230 * kMs) == Approx(0.1).epsilon(1e-3));
  // Half a second of burst is half of the window: a burst over the whole window shows as it was.
  CHECK(s.running_share(1000 * kMs, 1500 * kMs) == Approx(0.1).epsilon(1e-2));
  CHECK(one_busy_cpu(3000, 0, 3000, 0.2).running_share(1000 * kMs, 1030 * kMs) == Approx(0.2).epsilon(1e-2));
  // Far from it: nothing.
  CHECK(s.running_share(2800 * kMs, 2830 * kMs) == 0.0);
  // The machine's share over the run: 100 ms of 2 CPUs' 3 s.
  REQUIRE(s.run_share());
  CHECK(*s.run_share() == Approx(100.0 / 6000).epsilon(1e-3));
  // Steal at 1 % throughout (the column's one tick now and then): under the floor, taken as noise.
  CHECK(one_busy_cpu(3000, 0, 0, 0, 0.01).running_share(1200 * kMs, 1230 * kMs) == 0.0);
  CHECK(one_busy_cpu(3000, 0, 0, 0, 0.03).running_share(1200 * kMs, 1230 * kMs) == Approx(0.03).epsilon(1e-2));

  StealSeries never;
  CHECK_FALSE(never.run_share());
  CHECK(never.running_share(0, 10 * kMs) == 0.0);
  CHECK(never.stolen_while_running(0, 10 * kMs, 10 * kMs) == 0);
}

TEST_CASE("steal: a running thread's CPU time gets back what was stolen, at most doubled", "[steal]") {
  // A fifth taken: the thread was on a CPU cpu / 0.8, so a quarter of its CPU time more.
  CHECK(one_busy_cpu(3000, 0, 3000, 0.2).stolen_while_running(1000 * kMs, 1030 * kMs, 20 * kMs) ==
        Approx(5 * kMs).epsilon(2e-2));
  // Nine tenths taken: the share is held at one half, the CPU time doubled at most.
  CHECK(one_busy_cpu(3000, 0, 3000, 0.9).stolen_while_running(1000 * kMs, 1030 * kMs, 20 * kMs) == 20 * kMs);
  CHECK(one_busy_cpu(3000, 0, 0, 0).stolen_while_running(1000 * kMs, 1030 * kMs, 20 * kMs) == 0);
}

TEST_CASE("steal: the series keeps where the steal moved, and the last reading", "[steal]") {
  StealSeries s;
  s.cpus = 2;
  for (std::int64_t t = 0; t <= 20; t += 10) s.add(t * kMs, {0, t * kMs});
  s.add(30 * kMs, {10 * kMs, 30 * kMs});
  s.add(40 * kMs, {10 * kMs, 40 * kMs});
  s.add(50 * kMs, {10 * kMs, 50 * kMs});
  s.close();
  REQUIRE(s.points.size() == 4);  // 0, 20 (the reading before the rise), 30, 50 (the last)
  CHECK(s.points[1].t_ns == 20 * kMs);
  CHECK(s.points.back().t_ns == 50 * kMs);
  REQUIRE(s.run_share());
  CHECK(*s.run_share() == Approx(10.0 / 100));
}

TEST_CASE("steal: a long run of moving steal is thinned, its first and last readings kept", "[steal]") {
  StealSeries s;
  s.cpus = 1;
  const std::int64_t n = 3 * static_cast<std::int64_t>(StealSeries::kMaxPoints);
  for (std::int64_t i = 0; i <= n; ++i) s.add(i * kMs, {i * kMs / 10, i * kMs * 9 / 10});  // a tenth, steadily
  s.close();
  CHECK(s.points.size() <= StealSeries::kMaxPoints + 1);
  CHECK(s.points.front().t_ns == 0);
  CHECK(s.points.back().t_ns == n * kMs);
  REQUIRE(s.run_share());
  CHECK(*s.run_share() == Approx(0.1).epsilon(1e-3));
  CHECK(s.running_share(5000 * kMs, 5030 * kMs) == Approx(0.1).epsilon(1e-2));
}

TEST_CASE("steal: the reader reads this machine's /proc/stat", "[steal]") {
  gilhost::StealReader reader;
  StealSeries s;
  reader.read(0, s);
  reader.read(1 * kMs, s);  // within kMinGapNs: not read
  reader.read(2 * kMs, s, true);
  s.close();
  CHECK(s.cpus >= 1);
  REQUIRE(s.points.size() == 2);
  CHECK(s.points.back().t_ns == 2 * kMs);
  CHECK(s.points[0].times.busy_ns > 0);  // this machine has worked since it booted
  CHECK(s.points[1].times.busy_ns >= s.points[0].times.busy_ns);
  CHECK(s.points[1].times.steal_ns >= s.points[0].times.steal_ns);
  REQUIRE(s.run_share());
  CHECK(*s.run_share() >= 0.0);
  CHECK(*s.run_share() <= 1.0);
}

TEST_CASE("steal: a thread that ran while the host took a fifth of the CPU was on a CPU, not waiting",
          "[steal][thread_states]") {
  // One spinning thread, read at 0, 100 and 200 ms: its task clock counts 80 ms of each 100, nothing queued.
  gilhost::ThreadObservations obs;
  obs.interval_ms = 10;
  obs.root = 100;
  obs.processes[100] = {true, true};
  auto running = [](std::int64_t t_ms, std::int64_t cpu_ms) {
    gilhost::ThreadReading r;
    r.t_ns = t_ms * kMs;
    r.cpu_ns = cpu_ms * kMs;
    r.syscall.kind = gilhost::SyscallReading::Kind::running;
    return r;
  };
  obs.threads.push_back({100, 100, "main", {running(0, 0), running(100, 80), running(200, 160)}});
  const std::vector<gilhost::GilReport> gil{{true, 0x1000, 0x1100}};

  const gilhost::ThreadStates without = gilhost::classify_threads(obs, gil, "");
  CHECK(without.threads.at(0).times[ThreadState::cpu] == 160 * kMs);
  CHECK(without.threads.at(0).times[ThreadState::runqueue] == 40 * kMs);  // what its counters left, taken for a wait
  CHECK(without.python_stolen_ns == 0);
  CHECK_FALSE(without.steal_share);

  // The working CPU had 20 ms of each 100 taken: 80 / (1 - 0.2) = 100 ms on it.
  obs.steal.cpus = 2;
  for (std::int64_t t = 0; t <= 200; t += 10) obs.steal.add(t * kMs, {t * kMs / 5, t * kMs * 4 / 5});
  obs.steal.close();
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, gil, "");
  const gilhost::ThreadRecord& t = s.threads.at(0);
  CHECK(t.times[ThreadState::cpu] == Approx(200.0 * kMs).epsilon(1e-6));
  CHECK(t.times[ThreadState::runqueue] == 0);
  CHECK(t.stolen_ns == Approx(40.0 * kMs).epsilon(1e-6));
  CHECK(s.python_stolen_ns == t.stolen_ns);
  REQUIRE(s.steal_share);
  CHECK(*s.steal_share == Approx(0.1));  // of the machine's 2 CPUs' time
}
