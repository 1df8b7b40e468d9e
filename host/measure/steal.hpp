#pragma once
// The hypervisor's steal. On a virtual machine a CPU can have a thread to run while the host runs
// something else. The guest's scheduler still has the thread on that CPU, but the thread's schedstat CPU
// time (the kernel's task clock, which leaves steal out) does not count it, nor does its wait for a core.
// So a thread's counters come up short by what was stolen from it, and thread states would take that time
// for a wait. /proc/stat's steal column, read by the thread-state sampler, says how much of the machine's
// CPU time the host took over each stretch of the run; classify_threads gives a running thread its share
// back as CPU time (docs/results-format.md, "Steal").
#include <cstdint>
#include <optional>
#include <vector>

#include "util/fd.hpp"

namespace gilhost {

// /proc/stat's first line, all CPUs together, cumulative.
struct StatTimes {
  std::int64_t steal_ns = 0;
  std::int64_t busy_ns = 0;  // user, nice, system, irq, softirq: the CPUs at work (steal is in none of them)
};

// The machine's steal, and its CPUs' work, at times of the run.
struct StealSeries {
  struct Point {
    std::int64_t t_ns = 0;  // since the sampler's start
    StatTimes times;
  };
  int cpus = 0;  // CPUs online when first read; 0: never read
  // In time order: where the count changed, with the reading before it, and the last reading. Linear in
  // between. Past kMaxPoints every other interior point is dropped (a coarser curve, the same totals).
  std::vector<Point> points;
  static constexpr std::size_t kMaxPoints = 4096;

  // A reading at `t_ns` (later than the last one).
  void add(std::int64_t t_ns, const StatTimes& times);
  // After the last reading: the last point kept.
  void close();
  // What a thread on a CPU lost around [a_ns, b_ns]: the host's steal over the time the CPUs worked or
  // were stolen from (an idle CPU is never stolen from), over a window of kWindowNs at least, centred on
  // the interval (the column moves in 10 ms ticks: one tick is noise, a burst is not); below kMinShare, 0.
  double running_share(std::int64_t a_ns, std::int64_t b_ns) const;
  static constexpr std::int64_t kWindowNs = 1'000'000'000;
  // What the host took from a thread that ran `cpu_ns` between `a_ns` and `b_ns`: its task clock left that
  // out, and the guest's scheduler had it on a CPU, so its counters' shortfall is no wait. The share s of
  // the working CPUs' time stolen then, taken as this thread's: it was on a CPU cpu / (1 - s), so
  // cpu x s / (1 - s) of it was stolen (s at most one half: a doubling at most).
  std::int64_t stolen_while_running(std::int64_t a_ns, std::int64_t b_ns, std::int64_t cpu_ns) const;
  static constexpr double kMinShare = 0.02;
  // The share of the machine's CPU time the host took, first reading to last; nullopt when fewer than two.
  std::optional<double> run_share() const;

 private:
  StatTimes at(std::int64_t t_ns) const;
  Point last_{};
  bool has_last_ = false;
};

// /proc/stat's first line, "cpu  user nice system idle iowait irq softirq steal ...", in clock ticks, as
// ns; nullopt without the steal column.
std::optional<StatTimes> parse_stat_times(const char* text, long ticks_per_second);

// Reads /proc/stat through a descriptor the process keeps open (a pread, ~5 us), at most every kMinGapNs:
// the column moves in 10 ms ticks, and StealSeries::running_share looks at a second at a time.
class StealReader {
 public:
  static constexpr std::int64_t kMinGapNs = 50'000'000;
  // At `t_ns` (since the sampler's start): added to `into` unless the last read was less than kMinGapNs
  // ago (`force`: read anyway). Nothing once /proc/stat could not be read.
  void read(std::int64_t t_ns, StealSeries& into, bool force = false);

 private:
  bool failed_ = false;
  bool read_once_ = false;
  std::int64_t last_ns_ = 0;
};

}  // namespace gilhost
