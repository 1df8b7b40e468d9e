#pragma once
// The largest experiment gilhost plans (docs/config.md, "Limits"). A file past one is refused where it
// says so, before anything is expanded: a typo's 10**9 rounds or 1000 x 1000 x 1000 sweep never reaches
// memory.
#include <cstdint>

namespace gilhost::limits {

constexpr std::int64_t kMaxRounds = 100000;             // repeat, and warmup (each)
constexpr std::int64_t kMaxCases = 10000;               // cases of one experiment, sweeps expanded
constexpr std::int64_t kMaxPlannedRuns = 1000000;       // rounds x cases x builds of one run
constexpr std::int64_t kMaxSampleIntervalMs = 60000;    // one sample a minute
constexpr std::int64_t kMaxSubinterpreters = 1024;
constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;        // a week per run

}  // namespace gilhost::limits
