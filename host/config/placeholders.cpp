#include "config/placeholders.hpp"

#include "util/strings.hpp"

namespace gilhost {

std::string param_value_text(const nlohmann::json& value, bool grouped) {
  if (value.is_string()) return value.get<std::string>();
  if (!grouped || !value.is_number_integer()) return value.dump();
  return group_thousands(value.dump());
}

FilledText fill_placeholders(const std::string& text, const nlohmann::json& params, bool grouped) {
  FilledText out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out.text += text[i++];
      continue;
    }
    const std::size_t close = c == '{' ? text.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out.text += c;
      continue;
    }
    const std::string name = text.substr(i + 1, close - i - 1);
    if (params.is_object() && params.contains(name)) {
      out.text += param_value_text(params[name], grouped);
    } else {
      out.unknown.push_back(name);
      out.text += text.substr(i, close - i + 1);
    }
    i = close;
  }
  return out;
}

}  // namespace gilhost
