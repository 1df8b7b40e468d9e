#include "report/build_facts.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace gilhost {

std::string gil_reenabled_text(const Summary& summary, const std::string& label) {
  bool reenabled = false;
  std::vector<std::string> modules;
  for (const auto& [key, cell] : summary.cells) {
    if (key.second != label || !cell.free_threaded || cell.gil_forced || !cell.gil_enabled.value_or(false)) continue;
    reenabled = true;
    for (const auto& m : cell.gil_reenabled_by) add_unique(modules, m);
  }
  if (!reenabled) return "";
  return modules.empty() ? "GIL re-enabled" : "GIL re-enabled by " + join(modules, ", ");
}

bool is_adhoc(const ExperimentInfo& ex) {
  // `run` loads a script or module as an experiment whose path says so ("x.py (as an experiment)").
  const auto path = ex.document.find("path");
  return path != ex.document.end() && path->is_string() && ends_with(path->get<std::string>(), " (as an experiment)");
}

std::string result_label(const ExperimentInfo& ex, const std::string& case_name) {
  for (const auto& c : ex.cases)
    if (c.name == case_name && !c.show.empty()) return c.show;
  return "result";
}

bool has_result(const Cell& cell) {
  return std::any_of(cell.runs.begin(), cell.runs.end(), [](const RunRecord& r) { return r.has_result && r.is_ok(); });
}

}  // namespace gilhost
