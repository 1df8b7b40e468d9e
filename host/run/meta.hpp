#pragma once
// The results file's first line: what was run, on what, by which gilhost, on which machine.
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "discover/interpreter.hpp"
#include "results/record.hpp"

namespace gilhost {

// `config_file`: the experiment file as given on the command line (recorded absolute).
MetaRecord make_meta(const Experiment& ex, const std::vector<Interpreter>& selected, const std::string& config_file);

}  // namespace gilhost
