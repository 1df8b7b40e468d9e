#include "report/comparable.hpp"

#include "config/placeholders.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::vector<ParamChange> param_changes(const nlohmann::json& doc) {
  std::vector<ParamChange> out;
  if (!doc.is_object()) return out;
  const auto file = doc.find("file_params");
  const auto used = doc.find("params");
  if (file != doc.end() && file->is_object() && used != doc.end() && used->is_object()) {
    for (const auto& [k, v] : used->items()) {
      const auto was = file->find(k);
      if (was != file->end() && *was == v) continue;
      out.push_back({k, was == file->end() ? std::nullopt : std::optional<std::string>(param_value_text(*was)), param_value_text(v)});
    }
    return out;
  }
  if (const auto over = doc.find("param_overrides"); over != doc.end() && over->is_object())
    for (const auto& [k, v] : over->items()) out.push_back({k, std::nullopt, param_value_text(v)});
  return out;
}

std::string not_comparable_text(const std::vector<ParamChange>& changes) {
  std::vector<std::string> file, run;
  for (const auto& c : changes) {
    if (c.file_value) file.push_back(c.key + " = " + *c.file_value);
    run.push_back(c.key + " = " + c.run_value);
  }
  return "article (" + (file.empty() ? std::string() : join(file, ", ") + "; ") + "this run " + join(run, ", ") + "): not comparable";
}

}  // namespace gilhost
