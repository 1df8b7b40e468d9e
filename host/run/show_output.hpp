#pragma once
// --show-output: each run's captured output, once the run is over, labelled by case and build, so it
// never interleaves with the progress line or another run's output.
#include "run/scheduler.hpp"

namespace gilhost {

// Prints the finished run's stdout to our stdout and its stderr to our stderr, each under a label line
// ("── stdout of CASE @ BUILD (run N) ──"); nothing for a stream the run left empty.
void show_run_output(const Progress& finished);

}  // namespace gilhost
