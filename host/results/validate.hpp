#pragma once
// Figures a measurement cannot give, checked as a record is read (a hand-made, edited or corrupted
// file): they are left out with a note, never rendered ("GIL wait 117 %").
#include <string>

#include "results/record.hpp"

namespace gilhost {

// Why r's thread states cannot be true ("" when they can): a time below zero or past what int64 sums
// hold, a thread that lived longer than the run (spawn to reap), totals longer than all its threads.
std::string impossible_thread_states(const RunRecord& r);
// The same of one block of thread states, in a run the host saw last `parent_wall_ns` (0: unknown).
std::string impossible_thread_states(const ThreadStates& ts, std::int64_t parent_wall_ns);

// Why r's other figures cannot be true ("" when they can): a negative share of the CPU or load average.
std::string impossible_run_figures(const RunRecord& r);

}  // namespace gilhost
