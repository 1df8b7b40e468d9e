#pragma once
// The one progress line gilhost run keeps on a terminal's stderr, redrawn about once a second:
// "[3/12] threads[workers=8] @ 3.13  12s of 300s timeout · total 1m05s, ETA 2m".
#include <optional>
#include <string>

#include "run/scheduler.hpp"

namespace gilhost {

// Seconds until the planned runs are done, at the pace each cell's runs have taken so far (a cell not yet
// run: at the mean of those that have); nullopt before the first run has finished.
std::optional<double> eta_seconds(const Progress& p);
// The line's text for `p` (no escapes): pure, so its wording is testable.
std::string progress_line(const Progress& p);
// Replaces the line with `p`'s.
void print_progress(const Progress& p);
// Erases the line, before the report (or a run's shown output) is printed.
void clear_progress();

}  // namespace gilhost
