#pragma once
// What the subcommands' options share: validators that say what is wanted (CLI11's own range checks print
// the whole range of a double), and the hint for a misspelt option.
#include <string>

#include <CLI/CLI.hpp>

namespace gilhost {

// A whole number in [min, max], in words when it is not.
CLI::Validator whole_number_at_least(long min, long max = 1000000000);

// A number of seconds above 0 and at most limits::kMaxTimeoutS.
CLI::Validator seconds_above_zero();

// "did you mean '--quick' (not '--quik')?" for an option the parsed subcommand does not have, from CLI11's
// leftovers; "" when none is near.
std::string option_hint(CLI::App& app);

}  // namespace gilhost
