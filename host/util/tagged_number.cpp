#include "util/tagged_number.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace gilhost {

namespace {

bool all_digits(const std::string& s, std::size_t from) {
  if (from >= s.size()) return false;
  for (std::size_t i = from; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// "-1234567" -> "-1.235e6": four significant digits, rounded, trailing zeros dropped (one kept).
std::string scientific(const std::string& digits) {
  const bool negative = digits[0] == '-';
  const std::string d = digits.substr(negative ? 1 : 0);
  long exponent = static_cast<long>(d.size()) - 1;
  long lead = std::strtol(d.substr(0, 5).c_str(), nullptr, 10);  // 5 digits: d.size() > 20 here
  lead = (lead + 5) / 10;
  if (lead >= 10000) {  // 9.9996... rounds up to 10.00
    lead /= 10;
    ++exponent;
  }
  std::string m = std::to_string(lead);
  while (m.size() > 2 && m.back() == '0') m.pop_back();
  return (negative ? "-" : "") + m.substr(0, 1) + "." + m.substr(1) + "e" + std::to_string(exponent);
}

void append_display(std::string& out, const nlohmann::json& v) {
  if (const auto text = tagged_number_text(v)) {
    const std::size_t digits = text->size() - (text->front() == '-' ? 1 : 0);
    out += v.contains("$int") && digits > 20 ? scientific(*text) : *text;
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      if (!first) out += ',';
      first = false;
      out += nlohmann::json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ':';
      append_display(out, item);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      append_display(out, v[i]);
    }
    out += ']';
  } else {
    out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

nlohmann::json tag_non_finite(const nlohmann::json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    return {{"$float", std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf"}};
  }
  if (!v.is_structured()) return v;
  nlohmann::json out = v.is_array() ? nlohmann::json::array() : nlohmann::json::object();
  if (v.is_array())
    for (const auto& item : v) out.push_back(tag_non_finite(item));
  else
    for (const auto& [key, item] : v.items()) out[key] = tag_non_finite(item);
  return out;
}

std::optional<std::string> tagged_number_text(const nlohmann::json& v) {
  if (!v.is_object() || v.size() != 1) return std::nullopt;
  if (const auto f = v.find("$float"); f != v.end() && f->is_string()) {
    const std::string s = f->get<std::string>();
    if (s == "nan" || s == "inf" || s == "-inf") return s;
  }
  if (const auto i = v.find("$int"); i != v.end() && i->is_string()) {
    const std::string s = i->get<std::string>();
    if (all_digits(s, !s.empty() && s[0] == '-' ? 1 : 0)) return s;
  }
  return std::nullopt;
}

nlohmann::json decode_tagged_number(const nlohmann::json& v) {
  const auto text = tagged_number_text(v);
  if (!text) return v;
  if (*text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (*text == "inf") return std::numeric_limits<double>::infinity();
  if (*text == "-inf") return -std::numeric_limits<double>::infinity();
  return std::strtod(text->c_str(), nullptr);  // HUGE_VAL beyond the doubles' range
}

std::string display_json(const nlohmann::json& v) {
  std::string out;
  append_display(out, v);
  return out;
}

}  // namespace gilhost
