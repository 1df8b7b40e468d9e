#pragma once
// The one progress line gilhost run keeps on a terminal's stderr: "[3/12] case @ 3.13 warm-up (4s, ETA 12s)".
#include "run/scheduler.hpp"

namespace gilhost {

// Replaces the line with the run that starts now.
void print_progress(const Progress& p);
// Erases the line, before the report is printed.
void clear_progress();

}  // namespace gilhost
