#include "cli/options.hpp"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "cli/did_you_mean.hpp"
#include "config/limits.hpp"

namespace gilhost {

CLI::Validator whole_number_at_least(long min, long max) {
  return CLI::Validator(
      [min, max](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || n < min || n > max)
          return "'" + v + "' is not a whole number of at least " + std::to_string(min) + " (and at most " +
                 std::to_string(max) + ")";
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator seconds_above_zero() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(d > 0) || !(d <= limits::kMaxTimeoutS))
          return "'" + v + "' is not a number of seconds above 0 and at most a week";
        return {};
      },
      "SECONDS>0");
}

std::string option_hint(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : sub->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& n : opt->get_snames()) names.push_back("-" + n);
    }
    for (const auto& extra : sub->remaining())
      if (extra.rfind("-", 0) == 0)
        if (const std::string near = nearest_word(extra.substr(0, extra.find('=')), names); !near.empty())
          return "did you mean '" + near + "' (not '" + extra + "')?";
  }
  return {};
}

}  // namespace gilhost
