#pragma once
// Whether a run's figures can stand beside the article's: the article measured the experiment as its file
// sizes it ([params]); a profile (--quick) or --param that changes a param measures something else, and its
// 0.15x next to the article's 3.62x reads as a finding it is not.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost {

struct ParamChange {
  std::string key;
  std::optional<std::string> file_value;  // as the file's [params] set it; nullopt where only a case or nothing did
  std::string run_value;
};

// The params this run used that differ from the file's own, from the meta's experiment document:
// "file_params" (the [params] as written) against "params" (after profile and --param); files written before
// file_params was recorded: the --param overrides alone. Empty: comparable.
std::vector<ParamChange> param_changes(const nlohmann::json& experiment_document);

// "article (n = 3,000,000; this run n = 200,000): not comparable"
std::string not_comparable_text(const std::vector<ParamChange>& changes);

}  // namespace gilhost
