#pragma once
// [case.extract] / [experiment.extract] / --extract NAME=REGEX: numbers a script prints, made metrics.
// Each entry names a metric and gives an ECMAScript regex with exactly one capture group around the
// number; results/extract_metrics applies it to a run's captured stdout.
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "config/source_pos.hpp"

namespace gilhost {

struct ExtractSpec {
  std::string name;     // the metric's name
  std::string pattern;  // the regex as written
  std::regex regex;     // compiled once, at load time
  SourcePos where;      // the entry (file:line:column, or "--extract")
};

// The regex compiled, or why it cannot be used: not an ECMAScript regex, or not exactly one capture
// group (the number). `problem` is a sentence a user can act on.
std::optional<std::regex> compile_extract_regex(const std::string& pattern, std::string& problem);

// `specs` with `more` laid over them: an entry of `more` replaces the one of the same name (in place),
// others are appended. Experiment-wide entries, then the case's, then the command line's.
void overlay_extracts(std::vector<ExtractSpec>& specs, const std::vector<ExtractSpec>& more);

// "NAME=REGEX" (--extract) split at the first '='; throws std::invalid_argument without a NAME=.
std::pair<std::string, std::string> parse_extract_option(const std::string& arg);

}  // namespace gilhost
