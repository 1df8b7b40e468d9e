#pragma once
// Where every thread of a run's process tree spends its time, read from outside: for each thread, each
// tick, /proc/PID/task/TID/schedstat (time on a CPU and time waiting for one, exact and cumulative) and
// /proc/PID/task/TID/syscall (the system call it is blocked in, with its arguments); its name from comm.
//
// The sampler keeps the raw readings; what a wait *was* is decided after the run (classify_threads), once
// the runner has said where each GIL lives: a futex wait on a GIL's words is a GIL wait, any other futex
// wait a lock wait. That knowledge is the runner's (runner/gil_locator), never guessed here.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "results/thread_states.hpp"
#include "util/fd.hpp"

namespace gilhost {

// What /proc/PID/task/TID/syscall said: "running", "-1 SP PC" (blocked outside a system call), or
// "NR ARG1 ... ARG6 SP PC" (blocked in system call NR). Only the first two arguments are kept: they say
// which futex word, and how many descriptors a select or poll waits on.
struct SyscallReading {
  enum class Kind : std::uint8_t { running, outside_syscall, in_syscall, unreadable };
  Kind kind = Kind::unreadable;
  int number = -1;
  std::uint64_t arg0 = 0, arg1 = 0;
};
SyscallReading parse_syscall(const char* text);

// The futex words of one GIL in one process: [lo, hi).
struct GilWindow {
  std::uint64_t lo = 0, hi = 0;
  bool holds(std::uint64_t address) const { return address >= lo && address < hi; }
};

// What is known of one process's GILs.
struct ProcessGils {
  bool located = false;            // `windows` are all its GILs (none: it has no GIL)
  std::vector<GilWindow> windows;
  bool holds(std::uint64_t address) const;
};

// The state of a thread blocked in `reading` (never cpu or runqueue; `other` for a running one).
ThreadState classify_wait(const SyscallReading& reading, const ProcessGils& gils);

// One tick's reading of one thread.
struct ThreadReading {
  std::int64_t t_ns = 0;                 // since the sampler started (the run's spawn)
  std::int64_t cpu_ns = 0, delay_ns = 0;  // schedstat: on a CPU, waiting for one (since the thread began)
  SyscallReading syscall;
};

// Everything read of one thread.
struct ThreadTrack {
  pid_t pid = 0, tid = 0;
  std::string name;
  std::vector<ThreadReading> readings;
};

// What the sampler read of one run, before classification.
struct ThreadObservations {
  int interval_ms = 0;
  std::int64_t ticks = 0;
  std::int64_t cost_ns = 0;
  pid_t root = 0;
  struct Process {
    bool python = false;        // one of the run's Python processes (the root, its forks, python*)
    bool root_program = false;  // the root's program: the root or a fork of it, its GILs at the same addresses
  };
  std::map<pid_t, Process> processes;
  std::vector<ThreadTrack> threads;
  bool empty() const { return threads.empty(); }
};

// Reads the threads of the processes it is shown, each tick.
class ThreadStateSampler {
 public:
  ThreadStateSampler(pid_t root, std::int64_t start_ns, int interval_ms);
  // One live process at one tick: `threads` as just counted; `rescan` on the ticks that look for new
  // processes (thread names are read again then, and the thread list).
  void sample_process(pid_t pid, long threads, bool rescan);
  // Reads the threads due this tick.
  void end_tick();
  // Whether the sampler's tick `tick` (0, 1, ...) reads the threads: every tick for the run's first
  // kFullRateTicks, then every kStride-th: a long run's timeline at 3 intervals (30 ms by default) for a
  // third of the cost (docs/performance.md, "Thread states").
  static bool reads_threads_at(long tick) { return tick < kFullRateTicks || tick % kStride == 0; }
  ThreadObservations take();

  static constexpr long kFullRateTicks = 25;
  static constexpr long kStride = 3;
  static constexpr int kMaxThreadsPerTick = 128;  // past that, threads are read in turn
  static constexpr int kMaxThreadsWithFds = 256;  // past that, their files are opened at each read

 private:
  struct Track {
    ThreadTrack data;
    UniqueFd schedstat, syscall;
    bool gone = false;
  };
  struct Process {
    std::vector<pid_t> tids;  // as last listed
    long listed_threads = 0;
  };
  void list_threads(pid_t pid, Process& p);
  void read_thread(Track& t, std::int64_t now_ns);
  void note_process(pid_t pid);

  pid_t root_;
  std::string root_exe_;
  std::int64_t start_ns_;
  ThreadObservations obs_;
  std::map<pid_t, Process> processes_;
  std::map<pid_t, Track> tracks_;  // by tid
  int with_fds_ = 0;
  std::size_t cursor_ = 0;  // where the next tick starts reading, when not every thread fits in one
  std::vector<Track*> due_;
};

// What the runner said of the GILs of its process (protocol's GilEvent, one per interpreter).
struct GilReport {
  bool has_gil = false;
  std::uint64_t lo = 0, hi = 0;
};

// The record's thread states: `gils` apply to the root process and to its forks (the same addresses);
// other processes' GILs are not located unless they have one thread (a lone thread never waits for its
// own GIL). `unlocated_why` says why the root's GIL is not known when `gils` is empty.
// In measure/thread_classify.cpp: the totals and the timeline come from the same intervals.
// `not_the_case`: the runner's own helper threads (none of the case's), left out.
ThreadStates classify_threads(const ThreadObservations& obs, const std::vector<GilReport>& gils,
                              const std::string& unlocated_why, const std::vector<pid_t>& not_the_case = {});

}  // namespace gilhost
