#pragma once
// [case.extract] / [experiment.extract] / --extract NAME=REGEX: numbers a script prints, made metrics.
// Each entry names a metric and gives an RE2 regex (Python's re syntax, without backreferences and
// lookaround) with exactly one capture group around the number; results/extract_metrics applies it to a
// run's captured stdout. RE2 matches in time linear in the text and bounded stack, whatever a script prints.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/source_pos.hpp"

namespace re2 {
class RE2;
}

namespace gilhost {

struct ExtractSpec {
  std::string name;     // the metric's name
  std::string pattern;  // the regex as written
  std::shared_ptr<const re2::RE2> regex;  // compiled once, at load time (RE2 is not copyable; a sweep's cases share it)
  SourcePos where;      // the entry (file:line:column, or "--extract")
  // The group holds a time with its unit, as timeit prints it ("637 usec"): the metric is in seconds.
  bool duration = false;
};

// What a known module prints of its own timing, read as a metric in seconds, or nullopt for a module
// gilhost does not know: `python -m timeit` prints "200 loops, best of 5: 637 usec per loop".
struct KnownTiming {
  ExtractSpec spec;
  std::string what;  // "timeit's time per loop", as the report says what it compared
};
std::optional<KnownTiming> known_timing(const std::string& module);

// "637 usec", "1.2 msec", "35.1 nsec", "2 sec" (timeit's units) in seconds; nullopt for anything else.
std::optional<double> parse_duration(const std::string& text);

// The regex compiled, or null and why it cannot be used: not an RE2 regex, or not exactly one capture
// group (the number). `problem` is a sentence a user can act on.
std::shared_ptr<const re2::RE2> compile_extract_regex(const std::string& pattern, std::string& problem);

// `specs` with `more` laid over them: an entry of `more` replaces the one of the same name (in place),
// others are appended. Experiment-wide entries, then the case's, then the command line's.
void overlay_extracts(std::vector<ExtractSpec>& specs, const std::vector<ExtractSpec>& more);

// "NAME=REGEX" (--extract) split at the first '='; throws std::invalid_argument without a NAME=.
std::pair<std::string, std::string> parse_extract_option(const std::string& arg);

}  // namespace gilhost
