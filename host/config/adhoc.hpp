#pragma once
// `gilhost run script.py [-- ARGS]`: any script measured like an experiment's case, no TOML file needed.
// The experiment is written as the TOML a user would have written (one main-mode case) and loaded by the
// same loader, so it is validated, recorded and reported exactly like a file's.
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "config/loader.hpp"

namespace gilhost {

// Whether a `gilhost run` argument names a Python script rather than an experiment file.
bool is_python_script(const std::string& path);

// A dotted module name as `python -m` takes it: "http.server", "pkg._impl2".
bool is_module_name(const std::string& name);

// The experiment file's text for `script` run as __main__ with sys.argv[1:] = argv.
std::string script_experiment_toml(const std::string& script, const std::vector<std::string>& argv);

// The same for `gilhost run -m module`: the module run as `python -m module ARGS` runs it.
std::string module_experiment_toml(const std::string& module, const std::vector<std::string>& argv);

// Loads it (errors are ConfigErrors, located in a file named after the script: "race.py (as an experiment)").
Experiment load_script_experiment(const std::string& script, const std::vector<std::string>& argv,
                                  const LoadOptions& options = {});

Experiment load_module_experiment(const std::string& module, const std::vector<std::string>& argv,
                                  const LoadOptions& options = {});

// For `-m MODULE`: a warning where the module chooses how much work to do itself and gilhost does not read
// its own figure (pyperf, pyperformance), so the run's wall time does not track speed; "" otherwise
// (timeit's own time per loop is read: config/extract's known_timing).
std::string own_loop_count_warning(const std::string& module);

// A TOML basic string holding `text` exactly: "…" with \\, \" and control characters escaped.
std::string toml_quote(const std::string& text);

}  // namespace gilhost
