#pragma once
// "{name}" in an experiment's text (argv, description, view titles) -> the value of the param `name` as the
// run uses it, so a title says "200,000 iterations" when --quick runs 200,000; "{{" and "}}" are a brace.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost {

// A param value as text: strings bare; with `grouped`, integers with thousands separators (3,000,000),
// else as JSON writes them (what argv passes on).
std::string param_value_text(const nlohmann::json& value, bool grouped = true);

struct FilledText {
  std::string text;
  std::vector<std::string> unknown;  // names in braces that no param has (left as written)
};
FilledText fill_placeholders(const std::string& text, const nlohmann::json& params, bool grouped);

}  // namespace gilhost
