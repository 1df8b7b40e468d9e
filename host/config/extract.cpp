#include "config/extract.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "util/strings.hpp"

namespace gilhost {

namespace {
// The pattern as a message quotes it: a long one cut, so the message stays a line or two.
std::string quoted_pattern(const std::string& pattern) {
  return "'" + shortened(pattern, 80) + "'";
}
}  // namespace

std::shared_ptr<const re2::RE2> compile_extract_regex(const std::string& pattern, std::string& problem) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is the user's, said once, with its location
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok()) {
    problem = quoted_pattern(pattern) + " is not a regex (RE2, Python's re syntax without backreferences and lookaround): " +
              re->error();
    return nullptr;
  }
  // The one group is the number; a second would leave it ambiguous which one is meant.
  const int groups = re->NumberOfCapturingGroups();
  if (groups == 0) {
    problem = quoted_pattern(pattern) + " has no capture group: put ( ) around the number, as in 'took ([0-9.]+) s'";
    return nullptr;
  }
  if (groups > 1) {
    problem = quoted_pattern(pattern) + " has " + std::to_string(groups) +
              " capture groups: write exactly one, around the number (and (?:...) for any other group)";
    return nullptr;
  }
  return re;
}

void overlay_extracts(std::vector<ExtractSpec>& specs, const std::vector<ExtractSpec>& more) {
  for (const auto& m : more) {
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ExtractSpec& s) { return s.name == m.name; });
    if (it != specs.end()) *it = m;
    else specs.push_back(m);
  }
}

std::optional<double> parse_duration(const std::string& text) {
  static const RE2 form(R"(\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*(nsec|usec|msec|sec)\s*)");
  std::string number, unit;
  if (!RE2::FullMatch(text, form, &number, &unit)) return std::nullopt;
  const double scale = unit == "nsec" ? 1e-9 : unit == "usec" ? 1e-6 : unit == "msec" ? 1e-3 : 1.0;
  return std::strtod(number.c_str(), nullptr) * scale;
}

std::optional<KnownTiming> known_timing(const std::string& module) {
  if (module != "timeit") return std::nullopt;
  // timeit picks its loop count itself (-n), so its wall time does not track speed; its best time per
  // loop does: "200 loops, best of 5: 637 usec per loop" (Python 3.7 and later).
  KnownTiming t;
  t.spec.name = "timeit_s_per_loop";
  t.spec.pattern = "best of [0-9]+: ([0-9.eE+-]+ (?:nsec|usec|msec|sec)) per loop";
  std::string problem;
  t.spec.regex = compile_extract_regex(t.spec.pattern, problem);
  t.spec.duration = true;
  t.spec.where = SourcePos{"-m timeit", 0, 0};
  t.what = "timeit's time per loop";
  return t;
}

std::pair<std::string, std::string> parse_extract_option(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string name = eq == std::string::npos ? "" : trim(arg.substr(0, eq));
  if (name.empty())
    throw std::invalid_argument("--extract takes NAME=REGEX, the regex with one group around the number "
                                "(speedup='([0-9.]+)x faster'), not '" + arg + "'");
  return {name, arg.substr(eq + 1)};
}

}  // namespace gilhost
