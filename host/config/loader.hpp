#pragma once
// TOML experiment files -> Experiment, with every error located at file:line:column.
#include <stdexcept>
#include <string>
#include <vector>

#include "config/experiment.hpp"

namespace gilhost {

struct ConfigError {
  SourcePos where;
  std::string message;
  std::string str() const { return where.str() + ": error: " + message; }
};

// Thrown with all the errors found in one file, so a user fixes them in one pass.
class ConfigErrors : public std::runtime_error {
 public:
  explicit ConfigErrors(std::vector<ConfigError> errors);
  const std::vector<ConfigError>& errors() const { return errors_; }

 private:
  std::vector<ConfigError> errors_;
};

// What the command line changes in a file's experiment (all recorded in the experiment's json).
struct LoadOptions {
  std::string profile;  // applied when not empty (an unknown profile is an error)
  // --param KEY=VALUE: over [params], case params and the profile's; a sweep still sweeps its keys.
  nlohmann::json params = nlohmann::json::object();
  // --case GLOB: only the cases whose name ("threads[workers=2]") or base name ("threads") matches one
  // (shell wildcards); a glob that matches nothing is an error.
  std::vector<std::string> case_globs;
  // --extract NAME=REGEX: a metric from every case's stdout, over the file's [experiment.extract] and
  // [case.extract] entries of that name.
  std::vector<std::string> extracts;
};

// Loads and validates `path`; applies profile `profile` when not empty (unknown profile: an error).
Experiment load_experiment(const std::string& path, const std::string& profile = "");
Experiment load_experiment(const std::string& path, const LoadOptions& options);
// The same from text (tests, fuzzing); `path` names the file in messages and anchors relative paths.
Experiment load_experiment_text(const std::string& text, const std::string& path, const std::string& profile = "");
Experiment load_experiment_text(const std::string& text, const std::string& path, const LoadOptions& options);

// "KEY=VALUE" -> (KEY, VALUE typed as TOML types it: 5, 2.5, true, [1, 2], "text"); a VALUE that is not
// TOML is the string itself (--param mode=threads). Throws std::invalid_argument without a KEY=.
std::pair<std::string, nlohmann::json> parse_param_override(const std::string& arg);

}  // namespace gilhost
