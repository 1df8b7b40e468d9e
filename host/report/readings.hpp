#pragma once
// One-line readings of a cell's thread states, where the figures are plain: "4 threads waited for the GIL,
// 74 % of the Python threads' time: the GIL serialised them". Computed from the cell's median shares over its Python
// threads (report/threads), only for cells whose runs have thread states and 2+ Python threads. Every
// threshold is here, and in docs/reports.md ("Readings").
#include <optional>
#include <string>
#include <vector>

#include "report/summary.hpp"
#include "report/threads.hpp"
#include "results/record.hpp"

namespace gilhost {

namespace reading {
constexpr int kMinThreads = 2;             // fewer Python threads: nothing to contend
constexpr double kGilSerialised = 0.25;    // GIL wait share at least this: the GIL serialised the threads
constexpr double kLockConvoy = 0.60;       // lock share at least this (a join alone is at most half)
constexpr double kLockConvoyWorkers = 0.30;  // the working threads' own lock share at least this
constexpr double kIoBound = 0.50;          // I/O share at least this
constexpr double kParallelism = 1.5;       // CPU / wall above this...
constexpr double kParallelGilBelow = 0.05; // ...with a GIL wait share below this: the threads ran in parallel
constexpr double kWaitedForCore = 0.25;    // runqueue share at least this: more runnable threads than cores
constexpr double kBlocked = 0.80;          // a thread waiting in one state (lock, I/O, sleep) this share of its life
constexpr std::size_t kBlockedNamed = 4;   // threads named in a "mostly blocked" reading; the rest counted
constexpr double kMainBlocked = 0.50;      // the main thread (it carries the start-up) blocked with the others at this
}  // namespace reading

// The rules, in the order a cell's readings print: what dominated first, waiting for a core last; the
// threads that were mostly blocked after them all (they say which thread, the others say how much).
enum class ReadingRule { gil_serialised, lock_convoy, io_bound, parallel, waited_for_core, blocked };
const char* reading_rule_name(ReadingRule rule);  // "gil_serialised", ... (JSON)

struct Reading {
  std::string case_name, build;
  ReadingRule rule = ReadingRule::gil_serialised;
  std::string text;  // "lock convoy: the threads spent 95 % of their time waiting on a lock (n=3)"
  std::size_t n = 0;  // the runs the reading rests on
  // The interval of the GIL wait share a GIL reading rests on (its lower end at least the threshold for
  // "serialised", its upper end below it for "parallel": a reading claims what every bound supports).
  std::optional<Interval> interval;
};

// What the shares of one cell say; `cpu_per_wall` is the cell's median CPU / wall.
std::vector<Reading> cell_readings(const ThreadShares& shares, double cpu_per_wall);
// The threads of one run that waited in one state at least kBlocked of their life: "all 3 threads blocked
// on a lock until the timeout", or "3 threads mostly blocked: lock_waiter on a lock 100 %, reader on I/O
// 99 %, sleeper asleep 100 %" (a main thread waiting on a lock, its join(), is not named among the others).
// nullopt where none was, where an ok run had fewer than kMinThreads Python threads, or where every thread of
// an ok run waited on a lock (told from the GIL) or on I/O: the lock convoy and I/O readings say that.
std::optional<Reading> blocked_reading(const RunRecord& run);

// Every cell's readings, case by case in the grid's order, builds in column order.
std::vector<Reading> build_readings(const Summary& summary);

}  // namespace gilhost
