#pragma once
// Whether any thread of a run has been on a CPU since the last look, from the kernel's own switch records.
//
// The sampler leaves a tick unread when the tree has not run since the last one (measure/sampler). At 10
// ms or more it asks the run's cgroup, whose CPU count is exact at each switch but lags a thread that
// keeps running by up to a scheduler tick (1-10 ms): below 10 ms a tick, that count could call a running
// tree idle. The switches themselves cannot lag: a thread cannot run without being switched in.
//
// One software event per CPU, bound to the run's root and inherited by every thread and process it starts,
// takes no sample and counts nothing: it asks for the switch records (a thread put on or taken off a CPU)
// and the exit records of the run's threads, 24-40 bytes each, which gilhost reads at its ticks from
// memory, with no system call. A traced thread's switch costs it the writing of one record.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "measure/perf_ring.hpp"
#include "util/fd.hpp"

namespace gilhost {

class SwitchWatch {
 public:
  // Starts watching `root` (a process just exec'd, with one thread) and everything it starts from now on;
  // nullptr, with `why_not` set, where the kernel does not allow it (perf_event_paranoid 3 and over for
  // an unprivileged user, or no perf events at all).
  static std::unique_ptr<SwitchWatch> start(pid_t root, std::string& why_not);

  // True when no thread of the tree was switched in or out, started or ended since the last call, and
  // none is on a CPU now: nothing of the tree has run since the last call. `now_ns`: CLOCK_MONOTONIC.
  //
  // Each switch of a traced thread costs it about 0.25 us (the record, and the scheduler's perf hooks:
  // a C ping-pong over pipes, 160,000 switches, took 17 % more CPU watched). A tree that switches often
  // is busy and would be read every tick anyway, so the watch stops (its events closed, the hooks gone)
  // when it sees more than kMaxSwitchesPerSecond over any kWindowNs, or loses a record (a buffer
  // overrun): from then on quiet() is false and the tree is read each tick, as without the watch.
  bool quiet(std::int64_t now_ns);
  static constexpr double kMaxSwitchesPerSecond = 2000;  // 0.5 ms a second of the run's time at most
  static constexpr std::int64_t kWindowNs = 100000000;
  // Why and when the watch stopped; empty while it watches.
  const std::string& stopped_why() const { return stopped_why_; }

  // The threads on a CPU as the records last seen say (the root counts until its first record: it may be
  // running as the watch starts).
  int on_cpu() const { return on_cpu_; }
  bool lost() const { return lost_; }

  // A switch record (or an exit), decoded; public for the tests.
  struct Switch {
    std::int64_t t_ns = 0;
    std::int32_t tid = 0;
    enum Kind { in, out, exit } kind = in;
  };
  // Applies records in any order: they are put in time order first (each CPU has its own buffer).
  void apply(std::vector<Switch>& records);
  explicit SwitchWatch(pid_t root);

 private:
  void decode(const unsigned char* rec, std::size_t size);
  void stop_if_busy(std::int64_t now_ns);
  std::vector<UniqueFd> fds_;
  std::vector<PerfRing> rings_;
  std::vector<unsigned char> scratch_;
  std::vector<Switch> pending_;
  std::map<std::int32_t, bool> on_;  // each thread seen: on a CPU or not
  int on_cpu_ = 0;
  bool seen_ = false;  // a record since the last call
  bool lost_ = false;
  std::int64_t started_ns_ = -1, window_ns_ = -1;  // the first call; the window's start
  std::int64_t window_records_ = 0;
  std::string stopped_why_;
};

}  // namespace gilhost
