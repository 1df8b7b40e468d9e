#include "config/extract.hpp"

#include <algorithm>
#include <stdexcept>

#include "util/strings.hpp"

namespace gilhost {

namespace {
// libstdc++ compiles a regex by recursive descent: a bound on nesting keeps a hostile file from
// exhausting the stack (the fuzzer feeds the loader anything).
constexpr std::size_t kMaxPatternLength = 1000;
constexpr int kMaxNesting = 32;

int nesting_depth(const std::string& pattern) {
  int depth = 0, deepest = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') ++i;
    else if (pattern[i] == '(') deepest = std::max(deepest, ++depth);
    else if (pattern[i] == ')') --depth;
  }
  return deepest;
}
}  // namespace

std::optional<std::regex> compile_extract_regex(const std::string& pattern, std::string& problem) {
  if (pattern.size() > kMaxPatternLength || nesting_depth(pattern) > kMaxNesting) {
    problem = "the regex is longer than " + std::to_string(kMaxPatternLength) + " characters or nests groups deeper than " +
              std::to_string(kMaxNesting) + ": write a simpler one";
    return std::nullopt;
  }
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    problem = "'" + pattern + "' is not a regex (ECMAScript syntax): " + e.what();
    return std::nullopt;
  }
  // The one group is the number; a second would leave it ambiguous which one is meant.
  if (re.mark_count() == 0) {
    problem = "'" + pattern + "' has no capture group: put ( ) around the number, as in 'took ([0-9.]+) s'";
    return std::nullopt;
  }
  if (re.mark_count() > 1) {
    problem = "'" + pattern + "' has " + std::to_string(re.mark_count()) +
              " capture groups: write exactly one, around the number (and (?:...) for any other group)";
    return std::nullopt;
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

std::pair<std::string, std::string> parse_extract_option(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string name = eq == std::string::npos ? "" : trim(arg.substr(0, eq));
  if (name.empty())
    throw std::invalid_argument("--extract takes NAME=REGEX, the regex with one group around the number "
                                "(speedup='([0-9.]+)x faster'), not '" + arg + "'");
  return {name, arg.substr(eq + 1)};
}

}  // namespace gilhost
