#include "config/precision.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace gilhost {

namespace {

// The number `text` spells in full (no trailing junk), or nullopt.
std::optional<double> whole_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::optional<double> parse_precision(const std::string& text, std::string& why) {
  const std::string t = trimmed(text);
  if (t == "off" || t == "0" || t == "0%") return 0.0;
  const bool percent = !t.empty() && t.back() == '%';
  const std::optional<double> number = whole_number(percent ? trimmed(t.substr(0, t.size() - 1)) : t);
  if (!number) {
    why = "'" + text + "' is not a precision: write a percentage (3%), a fraction (0.03), or off";
    return std::nullopt;
  }
  const double fraction = percent ? *number / 100 : *number;
  if (!percent && fraction >= 1) {
    why = "'" + text + "' is a fraction of the median: write " + fmt::format("{:g}", *number) + "% or " +
          fmt::format("{:g}", *number / 100) + " for ±" + fmt::format("{:g}", *number) + " %";
    return std::nullopt;
  }
  if (fraction < 0 || fraction > kMaxPrecision) {
    why = "'" + text + "' is out of range: a precision is from 0 (off) to " + fmt::format("{:g}", kMaxPrecision * 100) + "%";
    return std::nullopt;
  }
  return fraction;
}

std::string precision_text(double fraction) {
  if (fraction <= 0) return "off";
  return fmt::format("±{:.3g} %", fraction * 100);
}

}  // namespace gilhost
