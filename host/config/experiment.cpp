#include "config/experiment.hpp"

#include "config/precision.hpp"
#include "util/strings.hpp"
#include "util/tagged_number.hpp"

namespace gilhost {

bool Expectation::applies(const Version& v, bool is_free_threaded, bool with_gil) const {
  if (python && !python->matches(v)) return false;
  if (free_threaded && *free_threaded != is_free_threaded) return false;
  if (gil && *gil != with_gil) return false;
  return true;
}

std::string Expectation::describe() const {
  std::vector<std::string> when, what;
  if (python) when.push_back("python " + python->text());
  if (free_threaded) when.push_back(*free_threaded ? "free-threaded" : "GIL build");
  if (gil) when.push_back(*gil ? "with the GIL" : "without the GIL");
  const std::string subject = key.empty() ? "result" : "result." + key;
  for (const auto& [op, value] : result_checks) what.push_back(subject + " " + op_symbol(op) + " " + value.dump());
  if (status) what.push_back("status " + *status);
  if (exit_code) what.push_back("exit " + std::to_string(*exit_code));
  if (error) what.push_back("raises " + *error);
  if (stdout_contains) what.push_back("stdout has \"" + *stdout_contains + "\"");
  if (stderr_contains) what.push_back("stderr has \"" + *stderr_contains + "\"");
  std::string out = when.empty() ? "" : join(when, ", ") + ": ";
  return out + join(what, ", ");
}

const Case* Experiment::find_case(const std::string& case_name) const {
  for (const auto& c : cases)
    if (c.name == case_name) return &c;
  return nullptr;
}

double Experiment::precision_target() const {
  if (precision) return *precision;
  return repeat_written ? 0.0 : kDefaultPrecision;
}

nlohmann::json Experiment::to_json() const {
  nlohmann::json cases_json = nlohmann::json::array();
  for (const auto& c : cases) {
    nlohmann::json expects = nlohmann::json::array();
    for (const auto& e : c.expects) expects.push_back(e.describe());
    nlohmann::json requires = nlohmann::json::object();
    if (c.requires.python) requires = {{"python", c.requires.python->text()}, {"because", c.requires.because}};
    nlohmann::json extract = nlohmann::json::object();
    for (const auto& e : c.extract) extract[e.name] = e.pattern;
    cases_json.push_back({{"name", c.name},
                          {"base_name", c.base_name},
                          {"mode", to_string(c.mode)},
                          {"function", c.function},
                          {"setup", c.setup},
                          {"script", c.script},
                          {"module", c.module},
                          {"params", tag_non_finite(c.params)},
                          {"sweep", tag_non_finite(c.sweep_values)},
                          {"argv", c.argv},
                          {"subinterpreters", c.subinterpreters},
                          {"gil", to_string(c.gil)},
                          {"show", c.show},
                          {"requires", requires},
                          {"expect", expects},
                          {"extract", extract},
                          {"compare", c.compare},
                          {"compare_what", c.compare_what}});
  }
  nlohmann::json views_json = nlohmann::json::array();
  for (const auto& v : views) views_json.push_back(view_to_json(v));
  nlohmann::json out = {{"name", name},       {"description", description}, {"path", path},
          {"script", script},   {"module", module},           {"interpreters", interpreters}, {"repeat", repeat},
          {"warmup", warmup},   {"timeout_s", timeout_s},     {"cell_budget_s", cell_budget_s}, {"sample_interval_ms", sample_interval_ms},
          {"thread_states", thread_states}, {"baseline", baseline}, {"env", env},               {"article", article},
          {"params", tag_non_finite(params)},   {"profile", profile},         {"cases", cases_json},
          {"param_overrides", tag_non_finite(param_overrides)}, {"file_params", tag_non_finite(file_params)}, {"case_globs", case_globs}, {"views", views_json},
          {"extract_options", extract_options}};
  // Only with a target: a file without it reads as fixed rounds (ExperimentInfo.precision).
  if (const double target = precision_target(); target > 0) out["precision"] = target;
  return out;
}

}  // namespace gilhost
