#include "config/placeholders.hpp"

namespace gilhost {

std::string param_value_text(const nlohmann::json& value, bool grouped) {
  if (value.is_string()) return value.get<std::string>();
  if (!grouped || !value.is_number_integer()) return value.dump();
  const std::string raw = value.dump();
  const std::size_t sign = raw[0] == '-' ? 1 : 0;
  std::string out = raw.substr(0, sign);
  for (std::size_t i = sign; i < raw.size(); ++i) {
    if (i > sign && (raw.size() - i) % 3 == 0) out += ',';
    out += raw[i];
  }
  return out;
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
