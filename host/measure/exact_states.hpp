#pragma once
// Exact thread states: every context switch, wake-up and blocking system call of a run's threads, as the
// kernel recorded them (measure/exact_recorder), turned into the same ThreadStates the sampled mode makes.
//
// The events come in time order. A thread is on a CPU from a switch-in to its switch-out; a switch-out
// that leaves it runnable (preempted, yielded) starts run-queue time, and one that leaves it blocked
// starts a wait, classified by the system call it entered last and has not left (a futex wait on a GIL's
// words is a GIL wait, any other futex wait a lock wait: measure/thread_states' classify_wait); its
// wake-up ends the wait and starts run-queue time until the next switch-in. Nothing here reads the
// kernel: the function is pure, and tested on hand-made events.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/thread_states.hpp"
#include "results/thread_states.hpp"

namespace gilhost {

struct ExactEvent {
  enum class Kind : std::uint8_t {
    sys_enter,   // `tid` entered system call `nr` with `arg0`, `arg1`
    sys_exit,    // `tid` left its system call
    switch_out,  // `tid` left its CPU: still runnable when `preempted`, else blocked
    switch_in,   // `tid` got a CPU
    wakeup,      // `tid` was made runnable (the waker may be any task, ours or not)
  };
  std::int64_t t_ns = 0;  // since the run's spawn
  std::uint64_t arg0 = 0, arg1 = 0;
  std::int32_t pid = 0;   // the thread's process; 0: not known from this event (a wake-up)
  std::int32_t tid = 0;
  std::int32_t nr = -1;
  Kind kind = Kind::switch_in;
  bool preempted = false;
};

// What the recorder kept of one run.
struct ExactTrace {
  std::vector<ExactEvent> events;                      // in time order
  std::map<pid_t, std::string> names;                  // by tid: its last name (comm)
  std::map<pid_t, ThreadObservations::Process> processes;
  pid_t root = 0;
  std::int64_t end_ns = 0;        // when recording stopped, since the run's spawn
  // When the events were on (the runner had exec'd), and what its thread had done by then (schedstat).
  std::int64_t attached_ns = 0, root_cpu_before_ns = 0, root_delay_before_ns = 0;
  std::int64_t lost = 0;          // records the kernel dropped, its buffers full
  std::int64_t truncated_at_ns = -1;  // past this, events were not kept (the cap); -1: all kept
  std::int64_t cost_ns = 0;       // what draining and decoding the buffers cost us
  std::int64_t drains = 0;        // how many times the buffers were read
  int interval_ms = 0;            // how often they were read
  // The host's steal over the run (measure/steal), read at the drains: a thread's time on a CPU between its
  // switches includes what the host took, as perf's does, and the record says how much there was.
  StealSeries steal;
  static constexpr std::size_t kMaxEvents = 1000000;  // ~40 MB: a bound on a run's memory
};

// Keeps, of a time-ordered stream, the events that change a thread's state: a system call is kept only
// if its thread blocked in it (its enter just before the switch-out, its exit when it comes). A run that
// makes a million reads that never block then costs no memory. Streaming: one `add` per event; `finish`
// once, at the end, adds each thread's last event where it was dropped (its `exit` call: a thread that
// ends on a CPU has no switch-out, and its time there counts up to that last event).
class ExactCompactor {
 public:
  explicit ExactCompactor(std::vector<ExactEvent>& out) : out_(out) {}
  void add(const ExactEvent& e);
  void finish();

 private:
  struct Thread {
    ExactEvent enter;        // the system call it is in, while `open`
    ExactEvent last;         // its latest event, and whether that went out
    bool open = false, kept = false, last_out = false;
  };
  void put(Thread& t, const ExactEvent& e);
  std::vector<ExactEvent>& out_;
  std::map<std::int32_t, Thread> threads_;  // by tid
};

// The record's thread states from the trace: GILs and exclusions as classify_threads takes them.
// `tree_cpu_ns`: the tree's CPU time as the kernel counted it (wait4's rusage), for the coverage; <= 0: not known.
ThreadStates exact_thread_states(const ExactTrace& trace, const std::vector<GilReport>& gils,
                                 const std::string& unlocated_why, const std::vector<pid_t>& not_the_case = {},
                                 std::int64_t tree_cpu_ns = 0);

}  // namespace gilhost
