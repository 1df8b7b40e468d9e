#pragma once
// Where every thread of a run spent its time (docs/results-format.md, "threads"): the record's types.
//
// measure/thread_states samples /proc/PID/task/TID/{schedstat,syscall,comm} each tick and classifies what
// it reads; this is what a run record keeps of it. Time on a CPU and time waiting for one are exact
// (schedstat); the off-CPU time is split by what the thread was seen waiting in at the samples around it
// and by the probes between them.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gilhost {

// What a thread was doing. The order is the order of every table and legend.
enum class ThreadState {
  cpu,       // running on a CPU
  runqueue,  // runnable, waiting for a core
  gil,       // waiting for the GIL of its interpreter
  lock,      // waiting on a lock, condition, queue, join (a futex that is not a GIL's)
  io,        // read/write/recv/send/poll/epoll/select/accept/connect
  sleep,     // time.sleep (nanosleep, clock_nanosleep, select or poll on no descriptor)
  other,     // any other wait (another system call, a page fault, stopped)
};
constexpr int kThreadStateCount = 7;
constexpr std::array<ThreadState, kThreadStateCount> kThreadStates{
    ThreadState::cpu, ThreadState::runqueue, ThreadState::gil,  ThreadState::lock,
    ThreadState::io,  ThreadState::sleep,    ThreadState::other};

// "cpu", "runqueue", "gil", "lock", "io", "sleep", "other": the names the results file uses.
const char* thread_state_name(ThreadState state);
// For people: "on CPU", "waiting for a core", "waiting for the GIL", ...
const char* thread_state_label(ThreadState state);
std::optional<ThreadState> parse_thread_state(const std::string& name);

// Nanoseconds in each state.
struct ThreadTimes {
  std::array<std::int64_t, kThreadStateCount> ns{};

  std::int64_t& operator[](ThreadState s) { return ns[static_cast<std::size_t>(s)]; }
  std::int64_t operator[](ThreadState s) const { return ns[static_cast<std::size_t>(s)]; }
  std::int64_t lived_ns() const;  // every state together
  // The share of the lived time in `s` (0 when nothing lived).
  double share(ThreadState s) const;
  ThreadTimes& operator+=(const ThreadTimes& o);
};

// A run of one state, from `start_ns` (since the run's spawn) to the next segment's start or the thread's end.
struct ThreadSegment {
  std::int64_t start_ns = 0;
  ThreadState state = ThreadState::other;
};

struct ThreadRecord {
  std::int64_t pid = 0, tid = 0;
  std::string name;     // the Python thread's name where the runner said it, else /proc's comm
  bool main = false;    // the thread that ran the case (Python's main thread)
  bool python = true;   // a thread of a Python process of the run (the runner, the interpreter, its workers)
  bool gil_located = false;  // its process's GIL was located, so GIL waits are told from lock waits
  std::int64_t start_ns = 0, end_ns = 0;  // first and last sight, since the run's spawn
  ThreadTimes times;
  // Off-CPU time no reading saw a wait for, in a thread whose end the runner reported (its exact counters
  // show the time off a CPU, nothing shows in what): in no state of `times`, so neither GIL wait nor not.
  std::int64_t unclassified_ns = 0;
  // Of its CPU time (times.cpu), an estimate of what the host of a virtual machine took while the thread
  // ran (steal: the guest had it on a CPU, its task clock did not count it); 0 where nothing was taken.
  std::int64_t stolen_ns = 0;
  std::vector<ThreadSegment> timeline;  // at the sampler's resolution (coarser past kMaxSegments)
  static constexpr std::size_t kMaxSegments = 2000;
};

// The threads a record keeps one by one; the rest count in its totals only.
constexpr int kMaxThreadsKept = 64;

// Every thread of one run.
struct ThreadStates {
  int interval_ms = 0;       // the sampler's interval
  std::int64_t samples = 0;  // ticks that read the threads
  std::int64_t probes = 0;   // wake-ups between ticks that read only the syscall files of threads in mixed waits
  // How GIL waits were told apart in this run: "located" (the runner said where each GIL lives), "none"
  // (no GIL: a free-threaded build with its GIL off), or why not ("exec mode: the GIL was not located").
  std::string gil;
  // Where the runner located its GILs: each [lo, hi) of futex words (empty when not located or none).
  std::vector<std::array<std::uint64_t, 2>> gil_windows;
  std::vector<ThreadRecord> threads;  // at most kMaxThreadsKept
  // Threads past the number kept one by one (a run with thousands): only in `python_totals`/`all_totals`.
  int threads_not_kept = 0;
  ThreadTimes python_totals;  // across the threads of the run's Python processes
  std::int64_t python_unclassified_ns = 0;  // their `unclassified_ns`, together: outside python_totals
  std::int64_t python_stolen_ns = 0;        // their `stolen_ns`, together: inside python_totals' cpu
  // The share of the machine's CPU time its host took over the run (/proc/stat's steal; a virtual
  // machine's, 0 elsewhere); nullopt where not read (an older file, exact mode, thread states off).
  std::optional<double> steal_share;
  // From this share up the reports name the steal: below it, /proc/stat's 10 ms ticks of steal are a tick or two.
  static constexpr double kNotableSteal = 0.01;
  int threads_reported = 0;  // threads whose end the runner reported (threading's), seen or not by the sampler
  std::int64_t cost_ns = 0;   // what reading the threads cost the sampler
  // The share of the process tree's CPU time (the kernel's per-process cumulative counts, which include
  // threads that have ended) that the threads seen account for; nullopt where it was not measured (an
  // older file). Below kMinCoverage the GIL wait is unknown, and `coverage_why` says why so little was seen.
  std::optional<double> coverage;
  std::string coverage_why;  // "1,560 threads lived between two readings", "" when nothing was missed
  static constexpr double kMinCoverage = 0.9;
  // How the states were taken: "sampled" (/proc at each tick) or "exact" (the kernel's switch and system
  // call events); "" in older files, which were sampled.
  std::string method = "sampled";

  // Time waiting for the GIL / the Python threads' classified time: the headline figure. Unclassified time
  // is in neither; `coverage` says how much of their time that leaves out.
  double gil_wait_share() const { return python_totals.share(ThreadState::gil); }
};

// The runner's names of its Python threads, by native id (3.9–3.13 leave /proc naming each thread after
// the runner): each Python thread whose tid is named takes that name; `main_tid`'s is marked main.
void name_python_threads(ThreadStates& states, const std::vector<std::pair<std::int64_t, std::string>>& names,
                         std::optional<std::int64_t> main_tid);

}  // namespace gilhost
