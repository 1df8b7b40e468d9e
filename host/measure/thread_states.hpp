#pragma once
// Where every thread of a run's process tree spends its time, read from outside: for each thread, each
// tick, /proc/PID/task/TID/schedstat (time on a CPU and time waiting for one, exact and cumulative) and
// /proc/PID/task/TID/syscall (the system call it is blocked in, with its arguments); its name from comm.
//
// The sampler keeps the raw readings; what a wait *was* is decided after the run (classify_threads), once
// the runner has said where each GIL lives: a futex wait on a GIL's words is a GIL wait, any other futex
// wait a lock wait. That knowledge is the runner's (runner/gil_locator), never guessed here.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "measure/steal.hpp"
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

// The probes of one interval (reads of a thread's syscall file alone, between two readings of it) that found
// it blocked: up to kSlots calls, each an index into its ThreadTrack::calls, with how many probes saw it. Two
// readings tell an interval's waits apart by one sight at each end; a thread that moves between waits
// faster than that (a lock convoy, sleepers that queue for the GIL) is split by every sight instead.
struct ProbeTally {
  static constexpr std::size_t kSlots = 3;
  std::array<std::uint8_t, kSlots> call{}, count{};
  // `n` more sights of call `index`; a fourth distinct call is not counted. A count that would pass 255
  // halves them all first (their proportions stay).
  void add(std::uint8_t index, unsigned n);
  void add(const ProbeTally& other);
  bool empty() const { return count[0] == 0 && count[1] == 0 && count[2] == 0; }
};

// One tick's reading of one thread.
struct ThreadReading {
  std::int64_t t_ns = 0;                 // since the sampler started (the run's spawn)
  std::int64_t cpu_ns = 0, delay_ns = 0;  // schedstat: on a CPU, waiting for one (since the thread began)
  SyscallReading syscall;
  ProbeTally probes;  // what probes saw since the reading before this one
};

// The distinct blocked calls a thread's probes saw, which ProbeTally's indices point into (at most 255).
using ProbeCalls = std::vector<SyscallReading>;
// `call`'s index in `calls`, added if new; -1 when the table is full.
int intern_call(ProbeCalls& calls, const SyscallReading& call);

// Whether the thread was off a CPU when read (blocked in a system call, or outside one).
inline bool call_blocked(const SyscallReading& s) {
  return s.kind == SyscallReading::Kind::in_syscall || s.kind == SyscallReading::Kind::outside_syscall;
}
inline bool reading_blocked(const ThreadReading& r) { return call_blocked(r.syscall); }
// Whether a thread's counters did not move between two readings.
inline bool counters_still(const ThreadReading& a, const ThreadReading& b) { return a.cpu_ns == b.cpu_ns && a.delay_ns == b.delay_ns; }

// Whether `b`, between `a` and `c`, says nothing the two do not: all three see the thread blocked in the
// same call with the same arguments and its counters still (it did not run in between). Dropping it
// changes neither the totals nor the timeline classify_threads makes of them.
bool redundant_reading(const ThreadReading& a, const ThreadReading& b, const ThreadReading& c);

// Bounds a thread's readings while the run goes (the sampler calls it when a thread's readings reach
// its cap): drops interior readings, those whose two intervals together are shortest first (half as
// dear when the reading saw the same call as both neighbours), never two neighbours in one pass and
// never the first or the last, until at most `target` remain. Time on a CPU, waiting for one, and
// lived stay exact (cumulative counters, the same ends); the off-CPU split of a merged interval comes
// from its two ends, as if that stretch had been sampled more coarsely.
// A dropped reading's probes, and its own sight when it saw the thread blocked, go to the reading after it.
void compact_readings(std::vector<ThreadReading>& readings, std::size_t target, ProbeCalls* calls = nullptr);

// Everything read of one thread.
struct ThreadTrack {
  pid_t pid = 0, tid = 0;
  std::string name;
  std::vector<ThreadReading> readings;
  ProbeCalls calls{};  // what its readings' probe tallies point into
  long reads = 0;      // readings taken (more than kept, once compacted)
  ProbeTally probes_after_last{};  // what probes saw after its last reading: its reported end's stretch takes them
};

// What the sampler read of one run, before classification.
struct ThreadObservations {
  int interval_ms = 0;
  std::int64_t start_ns = 0;  // CLOCK_MONOTONIC at the sampler's start: readings' t_ns count from here
  std::int64_t ticks = 0;
  std::int64_t probes = 0;  // wake-ups between ticks that read only the syscall files of threads in mixed waits
  std::int64_t cost_ns = 0;
  pid_t root = 0;
  struct Process {
    bool python = false;        // one of the run's Python processes (the root, its forks, python*)
    bool root_program = false;  // the root's program: the root or a fork of it, its GILs at the same addresses
    std::string exe{};
    // Where each libpython (or its program, when Python is linked in) is loaded: a GIL's place in another
    // process is its object's load address there plus the offset the runner reported (GilReport).
    std::map<std::string, std::uint64_t> bases{};
    // Coverage: the kernel's cumulative CPU count of the process (/proc/PID/stat, which includes its ended
    // threads) at its last checkpoint (a tick that read both it and its threads, or its exit seen as a
    // zombie), and what its threads' readings accounted for by then. -1: no checkpoint.
    std::int64_t cpu_ns = -1;
    std::int64_t seen_cpu_ns = 0;
    std::int64_t checkpoint_ns = -1;  // when that checkpoint was (since the sampler started)
  };
  std::map<pid_t, Process> processes;
  std::vector<ThreadTrack> threads;
  // Threads the sampler could not read fully, none dropped silently: each lowers the coverage and says why.
  struct Misses {
    long fd_threads = 0;          // threads whose files could not be opened: descriptors ran out
    long unreadable_threads = 0;  // threads whose schedstat or syscall file could not be read (not gone)
    long capped_reads = 0;        // readings left to a later tick by the kMaxThreadsPerTick cap
    long most_due = 0;            // the most threads due in one tick
    long listings = 0;            // task lists read
    long fd_processes = 0;        // processes not read: descriptors ran out
  };
  Misses misses;
  StealSeries steal;  // the host's steal over the run, read at the ticks that read the threads
  bool empty() const { return threads.empty(); }
};

// Reads the threads of the processes it is shown, each tick.
class ThreadStateSampler {
 public:
  ThreadStateSampler(pid_t root, std::int64_t start_ns, int interval_ms);
  // One live process at one tick: `threads` as just counted; `rescan` on the ticks that look for new
  // processes (thread names are read again then, and the thread list). `cpu_ns`: the kernel's count of
  // the process's CPU read this tick (/proc/PID/stat), or -1: a checkpoint for the coverage when >= 0.
  void sample_process(pid_t pid, long threads, bool rescan, std::int64_t cpu_ns = -1);
  // A process seen exited (a zombie) with its final CPU count: its last checkpoint.
  void process_ended(pid_t pid, std::int64_t cpu_ns);
  // A process whose /proc files could not be opened (descriptors ran out).
  void process_unreadable() { ++obs_.misses.fd_processes; }
  // Whether tick `tick` reads the threads: as reads_threads_at, and every tick for a while after a task
  // list showed threads coming and going (short-lived threads are seen at every interval then).
  bool due_at(long tick) const { return tick < full_rate_until_ || reads_threads_at(tick); }
  // Starts a tick that reads the threads (`tick` as in due_at).
  // `tree_idle`: the tree has used no CPU since the last tick (measure/sampler's watch_tree_cpu): a thread
  // blocked at its last reading is blocked there still, and its reading is that one again, taken from
  // memory (a real read would return the same counters and call).
  void begin_tick(long tick, bool tree_idle = false) {
    tick_ = tick;
    idle_tick_ = tree_idle;
    if (tree_idle) idle_next_read_ = std::numeric_limits<long>::max();  // lowered by each thread still due
  }
  // Whether an idle tick `tick` has a thread to read: not while every thread is parked and its next
  // reading is later (an idle tree's threads stay where they were). Any tick that found the tree running
  // (tree_ran) ends that.
  bool due_while_idle(long tick) const { return due_at(tick) && tick >= idle_quiet_until_; }
  void tree_ran() { idle_quiet_until_ = -1; }
  // Reads the threads due this tick.
  void end_tick();
  // Whether the sampler's tick `tick` (0, 1, ...) reads the threads: every tick for the run's first
  // kFullRateTicks, then every kStride-th: a long run's timeline at 3 intervals (30 ms by default) for a
  // third of the cost (docs/performance.md, "Thread states").
  static bool reads_threads_at(long tick) { return tick < kFullRateTicks || tick % kStride == 0; }
  // Probes: between ticks, the syscall file alone of each thread seen in two different waits (a lock
  // convoy, a sleeper that queues for the GIL), or in one wait again after it ran (which may hide another
  // the ticks do not see), so that its off-CPU time is split by many sights rather than
  // one at each end of an interval. The gap between probes grows with the run's age (age / kProbesPerAge,
  // at least kMinProbeGapNs): the split's sampling error falls as sqrt(gap / length), so every run length
  // gets about the same precision, at a number of probes that grows with the log of the run's length.
  // The next gap, jittered by +-50 % (a wait that recurs at the probes' period is not seen always in one
  // phase); 0 when no thread needs probes or ticks that read the threads come as often.
  std::int64_t next_probe_gap_ns(std::int64_t now_ns);
  void probe();
  ThreadObservations take();

  static constexpr std::int64_t kMinProbeGapNs = 2000000;
  static constexpr std::int64_t kProbesPerAge = 256;
  static constexpr int kMaxProbesPerWake = 32;  // threads probed at one wake-up, in turn past that
  // A thread is probed until each of its waits' share of its sights is known to this (one standard
  // error, sqrt(p (1 - p) / n)): 1.5 points of its time off a CPU. A thread that waits in the GIL at 5 %
  // of its sights is settled after ~210 sights, one that splits its waits evenly after ~1,100.
  static constexpr double kProbePrecision = 0.015;

  static constexpr long kFullRateTicks = 25;
  static constexpr long kStride = 3;
  // A parked thread (blocked in one call, not run since its reading before) is read at the default
  // interval's cadence, kStride x 10 ms, however short the interval: its next reading can only repeat
  // the last until it wakes, and that cadence is the one the oracle checks (tests/bench/oracle.py). At
  // 1 ms a sleeping thread was 1 read in 3 ticks, a third of the sampler's reads (docs/performance.md).
  static constexpr std::int64_t kParkedGapNs = kStride * 10'000'000;
  // Ticks between a parked thread's readings: at least kStride, so the default interval reads as before.
  static long parked_stride(int interval_ms);
  static constexpr int kMaxThreadsPerTick = 128;  // past that, threads are read in turn
  static constexpr int kMaxThreadsWithFds = 256;  // past that, their files are opened at each read
  // Readings kept across all threads (56 bytes each): each thread's cap is its share, a power of two
  // between kMinReadingsPerThread and kMaxReadingsPerThread; a thread at its cap is compacted to half.
  static constexpr std::size_t kReadingBudget = std::size_t{1} << 17;
  static constexpr std::size_t kMinReadingsPerThread = 64, kMaxReadingsPerThread = 4096;
  std::size_t readings_cap() const;

 private:
  struct Track {
    ThreadTrack data;
    UniqueFd schedstat, syscall;
    bool gone = false;
    bool missed_fd = false, missed_unreadable = false;  // counted once in obs_.misses
    long read_tick = -1;  // the tick of its last reading
    ProbeTally pending;          // probes since its last reading, for the next one
    SyscallReading last_wait;    // the last blocked call a reading or a probe saw (unreadable: none yet)
    bool mixed = false;          // seen in two different waits, or in one twice with a run between, or off a CPU
                                 // where no reading saw it (waited_unseen): probed, until settled()
    bool two_waits = false;      // seen in two different waits: read at every interval even while parked
    bool parked = false;         // blocked in one call since the reading before (a join): not probed
    std::uint32_t early_sights = 0;     // readings that saw it blocked before it mixed
    std::int64_t unseen_off_ns = 0;     // off a CPU between readings that saw it running (off_unseen)
    std::vector<std::uint32_t> sights;  // once mixed, per call of data.calls: readings and probes that saw it
  };
  struct Process {
    std::vector<pid_t> tids;  // as last listed
    long listed_threads = 0;
    UniqueFd task_dir;        // /proc/PID/task, kept for the first kMaxTaskDirs processes
    std::int64_t seen_cpu_ns = 0;  // its threads' CPU as last read, all together
    std::int64_t checkpoint_cpu_ns = -1;  // this tick's kernel count, until end_tick records it
  };
  static constexpr int kMaxTaskDirs = 64;
  static constexpr int kMaxMapsReads = 10;  // per process, at rescans, until its libpython is seen mapped
  std::map<pid_t, int> maps_reads_;
  static constexpr long kChurnTicks = 50;  // every tick for this long after threads were seen coming and going
  void list_threads(pid_t pid, Process& p);
  void read_thread(Track& t, std::int64_t now_ns);
  void repeat_reading(Track& t, std::int64_t now_ns);
  void schedstat_unread(Track& t, bool opened, int err);
  void read_call(Track& t, const ThreadReading* last, ThreadReading& r, UniqueFd& sched, UniqueFd& sys);
  void take_reading(Track& t, const ThreadReading* last, ThreadReading& r);
  void keep_reading(Track& t, const ThreadReading& r);
  bool idle_tick_ = false;  // begin_tick's tree_idle
  StealReader steal_;
  void note_process(pid_t pid, bool rescan);
  void note_objects(pid_t pid, ThreadObservations::Process& p);
  void descriptors_ran_out();
  // A reading or probe that saw `t` blocked in `call`: its sight counted, and whether it is mixed. The call's
  // index in its calls once mixed, else -1.
  int count_sight(Track& t, const SyscallReading& call);
  // `n` sights of `call` in `t`'s tally: the call's index in its calls, or -1 (too many calls).
  int add_sights(Track& t, const SyscallReading& call, std::uint32_t n);
  // `t` probed from now on (ever_mixed_), its sights counted by call.
  void mix(Track& t);
  static bool settled(const Track& t);
  std::vector<Track*> ever_mixed_;  // every thread that mixed, while it lives (tracks_ keeps them in place)
  std::vector<Track*> mixed_;       // of those, the ones probed: refreshed at each tick that reads the threads
  std::size_t probe_cursor_ = 0;
  std::uint64_t jitter_state_ = 0x9e3779b97f4a7c15ULL;

  pid_t root_;
  std::string root_exe_;
  std::int64_t start_ns_;
  ThreadObservations obs_;
  std::map<pid_t, Process> processes_;
  std::map<pid_t, Track> tracks_;  // by tid
  int with_fds_ = 0;
  int max_with_fds_ = kMaxThreadsWithFds;  // 0 once descriptors ran out: files opened at each read
  int task_dirs_ = 0;
  long tick_ = 0;
  long full_rate_until_ = 0;
  long parked_stride_ = kStride;
  // At an idle tick, the first tick any of its threads is due (next_due_tick); from end_tick of an idle
  // tick, idle_quiet_until_: the idle ticks before it read nothing.
  long idle_next_read_ = -1, idle_quiet_until_ = -1;
  long next_due_tick(const Track& t) const;
  // After an idle tick's readings (`all_read`: none left for a later tick): idle_quiet_until_.
  void end_idle_tick(bool all_read);
  // Whether `t` waits for a later tick: parked, never seen in two waits, read less than parked_stride_
  // ticks ago, and this tick is neither in a full-rate stretch nor a checkpoint of its process's CPU
  // (coverage needs every thread).
  bool parked_not_due(const Track& t, bool checkpoint) const;
  // The run's first ticks, and a while after threads came and went: every thread is read at every tick.
  bool full_rate_tick() const { return tick_ < kFullRateTicks || tick_ < full_rate_until_; }
  std::vector<pid_t> checkpoints_;  // processes with a kernel count this tick
  std::size_t cursor_ = 0;  // where the next tick starts reading, when not every thread fits in one
  std::vector<Track*> due_;
};

// What the runner said of the GILs of its process (protocol's GilEvent, one per interpreter).
struct GilReport {
  bool has_gil = false;
  std::uint64_t lo = 0, hi = 0;
  std::int64_t interpreter = 0;  // 0: the main one; < 0: interpreters the script made, not located (no window)
  // The object (libpython, or the program Python is linked into) that holds the window, and the window's
  // offset from its load address: where the same GIL lives in other processes that load that object
  // (spawn and forkserver workers). Empty: not static in an object (a subinterpreter's own GIL).
  std::string object{};
  std::uint64_t object_offset = 0;
};

// What the runner said of one of its threading.Thread threads as it ended (protocol's ThreadEnd): its CPU
// time, exact, read by the thread itself, and its life on the same clock as the sampler's. Not its time
// waiting for a core (only /proc has that, too dear to read per thread).
struct ThreadEndReport {
  pid_t tid = 0;
  std::int64_t started_ns = 0, ended_ns = 0;  // CLOCK_MONOTONIC: its start() in its parent; its end
  std::int64_t cpu_ns = 0;                    // on a CPU, over its whole life
};

// Every thread end the runner reported for its own process (the run's root), and how many it left out.
struct ThreadEnds {
  std::vector<ThreadEndReport> reports;
  std::int64_t dropped = 0;
};

// The record's thread states: `gils` apply to the root process and to its forks (the same addresses);
// in other Python processes that load the main interpreter's GIL's object, that GIL is at their load
// address plus its offset; other processes' GILs are not located unless they have one thread (a lone
// thread never waits for its own GIL). `unlocated_why` says why the root's GIL is not known when `gils`
// is empty. The coverage counts only threads whose GIL wait is known.
// In measure/thread_classify.cpp: the totals and the timeline come from the same intervals.
// `not_the_case`: the runner's own helper threads (none of the case's), left out.
// `ends`: the root's threads as they reported their ends. Each closes what the sampler read of that thread
// (matched by tid and time) from its start to its end, with its exact CPU time; a thread the sampler never
// read is known from its report alone. Its time off a CPU that no reading classified (after its last
// reading, or all of it when never read) is `unclassified_ns`: never in `times`, so it counts neither as
// GIL wait nor as any other (measure/thread_classify.cpp).
ThreadStates classify_threads(const ThreadObservations& obs, const std::vector<GilReport>& gils,
                              const std::string& unlocated_why, const std::vector<pid_t>& not_the_case = {},
                              const ThreadEnds& ends = {});

}  // namespace gilhost
