#pragma once
// Records the switches, wake-ups and system calls of a run's threads with perf_event_open, for the exact
// thread states (measure/exact_states). Per CPU, one ring buffer holds:
// - raw_syscalls:sys_enter (with the call's arguments: which futex word) and raw_syscalls:sys_exit;
// - sched:sched_wakeup and sched:sched_wakeup_new (a thread made runnable, whoever woke it);
// - the kernel's own switch records of the traced threads (PERF_RECORD_SWITCH: in, out, and whether a
//   switch-out left the thread runnable), and its fork and name records.
// The events are bound to the run's root process and inherited by every thread and process it starts,
// so the buffers hold the run's threads alone, however busy the machine. The tracepoints' ids and record
// layouts are read from tracefs at run time. Needs perf events with raw tracepoint data: root,
// CAP_PERFMON, or kernel.perf_event_paranoid at -1; where they are not allowed, start() says why.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "measure/exact_states.hpp"

namespace gilhost {

class ExactRecorder {
 public:
  // Starts recording `root` (a process just exec'd, with one thread) and every thread and process it
  // starts from now on. `start_ns`: the run's spawn (CLOCK_MONOTONIC), the events' origin. nullptr, with
  // `why_not` set, where the kernel does not allow it.
  static std::unique_ptr<ExactRecorder> start(pid_t root, std::int64_t start_ns, int interval_ms, std::string& why_not);
  // Whether this process may record exact states; why not. Asked of the kernel once, then remembered.
  static bool available(std::string& why_not);

  // Empties the buffers into the trace (each tick of the run: the buffers are bounded, the run is not).
  void drain();
  // Everything, once the run's tree is gone.
  ExactTrace finish();

  ~ExactRecorder();
  ExactRecorder(const ExactRecorder&) = delete;
  ExactRecorder& operator=(const ExactRecorder&) = delete;

  struct Impl;

 private:
  explicit ExactRecorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gilhost
