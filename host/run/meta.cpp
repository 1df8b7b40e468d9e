#include "run/meta.hpp"

#include <filesystem>

#include "util/clock.hpp"
#include "measure/machine.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "util/gilhost_version.hpp"

namespace fs = std::filesystem;

namespace gilhost {

MetaRecord make_meta(const Experiment& ex, const std::vector<Interpreter>& selected, const std::string& file) {
  MetaRecord meta;
  meta.format = kResultsFormat;
  meta.gilhost_version = GILHOST_VERSION;
  meta.started_unix_ns = realtime_ns();
  meta.machine = machine_from_json(machine_metadata());
  meta.experiment = experiment_info(ex.to_json());
  for (const auto& i : selected) meta.interpreters.push_back(build_record(i));
  meta.config_file = fs::absolute(file).string();
  return meta;
}

}  // namespace gilhost
