#include "run/meta.hpp"

#include <filesystem>

#include "measure/clock.hpp"
#include "measure/machine.hpp"
#include "run/results_file.hpp"
#include "util/gilhost_version.hpp"

namespace fs = std::filesystem;

namespace gilhost {

nlohmann::json make_meta(const Experiment& ex, const std::vector<Interpreter>& selected, const std::string& file) {
  nlohmann::json interps = nlohmann::json::array();
  for (const auto& i : selected) interps.push_back(i.to_json());
  return {{"type", "meta"},
          {"format", kResultsFormat},
          {"gilhost_version", GILHOST_VERSION},
          {"started_unix_ns", realtime_ns()},
          {"machine", machine_metadata()},
          {"experiment", ex.to_json()},
          {"interpreters", interps},
          {"config_file", fs::absolute(file).string()}};
}

}  // namespace gilhost
