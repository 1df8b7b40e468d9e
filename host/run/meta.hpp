#pragma once
// The results file's first line: what was run, on what, by which gilhost, on which machine.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/experiment.hpp"
#include "discover/interpreter.hpp"

namespace gilhost {

// `config_file`: the experiment file as given on the command line (recorded absolute).
nlohmann::json make_meta(const Experiment& ex, const std::vector<Interpreter>& selected, const std::string& config_file);

}  // namespace gilhost
