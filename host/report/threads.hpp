#pragma once
// What reports read from runs' thread states (results/thread_states.hpp): a cell's shares of each state
// over its measured ok runs, the run whose timeline a report draws, and each thread's timeline as spans.
// The GIL wait column, the readings, compare, the gil_wait view, the lanes and the trace all start here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/interval.hpp"
#include "results/record.hpp"

namespace gilhost {

// Where a cell's Python threads spent their time: per state, the median over the cell's measured ok runs
// (those with thread states) of that state's share of the Python threads' lived time (python_totals).
// A thread that waited for the GIL at least this share of its life is one of a cell's GIL waiters.
constexpr double kGilWaiterShare = 0.10;
constexpr double kLockWorkerCpuShare = 0.05;
constexpr int kLockConvoyTurns = 10;  // waits on a lock in a thread's timeline, at least, for a convoy

struct ThreadShares {
  int runs = 0;             // measured ok runs with thread states
  int gil_runs = 0;         // of those, the ones that told GIL waits from lock waits
  bool no_gil = false;      // every run had no GIL to wait for (a free-threaded build with its GIL off)
  int python_threads = 0;   // Python threads per run (median)
  // Python threads that waited for the GIL at least kGilWaiterShare of their life, per run, and the share of
  // their own time they waited (medians over the told-apart runs): a main thread that only join()s is not one.
  int gil_waiters = 0;
  double gil_waiters_share = 0;
  // Python threads that worked (on a CPU at least kLockWorkerCpuShare of their life: a join()ing main thread
  // does not) and waited on a lock at least kGilWaiterShare, in kLockConvoyTurns waits or more, per run, and
  // their own lock and GIL shares (medians).
  int lock_waiters = 0;
  double lock_waiters_share = 0;
  double lock_waiters_gil_share = 0;
  std::array<double, kThreadStateCount> median{};  // per state, in kThreadStates' order
  // The GIL wait share: the median of gil_wait_share() over the runs that told GIL waits apart, with its
  // n and interval. nullopt (unknown, never 0) where a run did not: its GIL not located, a process whose GIL
  // was not located while its threads waited on locks, or its threads seen for under kMinCoverage of the
  // tree's CPU time; `gil_unknown_why` says which ("1,560 threads lived between two readings").
  std::optional<double> gil_wait;
  std::optional<Estimate> gil_wait_estimate;
  std::string gil_unknown_why;
  std::optional<double> coverage;  // the lowest coverage of its runs, where they measured it

  double share(ThreadState s) const { return median[static_cast<std::size_t>(s)]; }
  // Every run told GIL waits apart: GIL and lock shares mean what they say.
  bool gil_told_apart() const { return runs > 0 && gil_runs == runs; }
};

// nullopt where no measured ok run has thread states (or none lived any time).
std::optional<ThreadShares> thread_shares(const std::vector<RunRecord>& runs);

// The same shares over the cell's measured runs that failed (a timeout, an error, a crash) and have thread
// states: where a case's threads were when it failed ("all threads blocked on a lock"). nullopt where none.
std::optional<ThreadShares> failed_thread_shares(const std::vector<RunRecord>& runs);
// The middle of those failed runs (in round order), or nullptr: the one whose threads a reading names.
const RunRecord* median_failed_thread_run(const std::vector<RunRecord>& runs);

// The GIL wait share of runs (one cell's): thread_shares' gil_wait, nullopt where it has none.
std::optional<double> median_gil_wait(const std::vector<RunRecord>& runs);

// A run that told GIL waits from lock waits: its GIL was located, or it had none.
bool gil_told_apart(const ThreadStates& states);
// Why a run's GIL wait share is unknown, or "" where it is known: the GIL not located (`gil` says why), a
// process with threads whose GIL was not located while they waited on locks, coverage under kMinCoverage.
std::string gil_unknown_reason(const ThreadStates& states);
// The Python threads of a run, counting those the sampler did not keep one by one.
int python_thread_count(const ThreadStates& states);

// "74 %": a share (0..1) as a whole percentage.
std::string percent_text(double share);
// "+12 pts", "-62 pts", "0 pts": B's share against A's, in points of the percentages as shown.
std::string points_change_text(double a_share, double b_share);
// The GIL wait column: "74 %"; "?" where the runs have thread states but the share is unknown (the GIL not
// located, too little of the tree's CPU time seen: gil_unknown_why); "-" where no run has thread states.
std::string gil_wait_text(const std::optional<ThreadShares>& shares);

// The measured ok run with thread states whose wall time is the median (the faster of the middle two), or
// nullptr: the run whose threads a report draws.
const RunRecord* median_thread_run(const std::vector<RunRecord>& runs);

// A stretch of one state: from start_ns to end_ns since the run's spawn.
struct StateSpan {
  std::int64_t start_ns = 0, end_ns = 0;
  ThreadState state = ThreadState::other;
};
// A thread's timeline as spans: each segment ends where the next starts, the last at the thread's end;
// segments of no length are left out.
std::vector<StateSpan> thread_spans(const ThreadRecord& thread);
// The latest end of any thread of the run (0 without threads): the length of its timeline.
std::int64_t timeline_end_ns(const ThreadStates& states);

}  // namespace gilhost
