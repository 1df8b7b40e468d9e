#pragma once
// Facts about a section's builds and experiment that every table naming a build repeats: a free-threaded
// build whose GIL an extension turned back on, and whether the experiment is an ad-hoc script.
#include <string>

#include "report/summary.hpp"

namespace gilhost {

// "GIL re-enabled by NAME, NAME" where some cell of `label` ran free-threaded with its GIL back on (not
// forced): "GIL re-enabled" where no run named the module; "" otherwise.
std::string gil_reenabled_text(const Summary& summary, const std::string& label);

// The experiment is a script or module gilhost ran as __main__ (`gilhost run script.py`, `-m NAME`), not a
// TOML file: its report compares the builds with the first, as `run` did.
bool is_adhoc(const ExperimentInfo& ex);

// What a grid cell's result is: the case's show key ("parallelism"), else "result".
std::string result_label(const ExperimentInfo& ex, const std::string& case_name);

// Some measured run of the cell returned a result (else its result text is an error's type, or "-").
bool has_result(const Cell& cell);

}  // namespace gilhost
