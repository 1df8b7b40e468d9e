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

// Loads and validates `path`; applies profile `profile` when not empty (unknown profile: an error).
Experiment load_experiment(const std::string& path, const std::string& profile = "");
// The same from text (tests, fuzzing); `path` names the file in messages and anchors relative paths.
Experiment load_experiment_text(const std::string& text, const std::string& path, const std::string& profile = "");

}  // namespace gilhost
