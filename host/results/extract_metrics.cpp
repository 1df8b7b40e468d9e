#include "results/extract_metrics.hpp"

#include <re2/re2.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "util/strings.hpp"

namespace gilhost {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Digits with optional thousands commas ("1,234,567"): the digits alone, or nullopt when a comma is out
// of place (so "1,5" is not read as 15).
std::optional<std::string> integer_digits(std::string_view s) {
  if (s.find(',') == std::string_view::npos) return std::string(s);
  const std::vector<std::string> groups = split(s, ',');
  std::string out;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::size_t n = groups[i].size();
    if (i == 0 ? (n < 1 || n > 3) : n != 3) return std::nullopt;
    out += groups[i];
  }
  return out;
}

// Terminal colours (ESC [ ... letter) out of a line: a script that colours its output anyway.
std::string without_ansi(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;
      continue;
    }
    out += line[i];
  }
  return out;
}

// The marker the capture puts where it dropped the middle of a long output (run/child.cpp):
// "[... 123 bytes not kept ...]".
bool is_truncation_marker(const std::string& line) {
  const std::string head = "[... ", tail = " bytes not kept ...]";
  if (line.size() <= head.size() + tail.size() || !starts_with(line, head) || !ends_with(line, tail)) return false;
  for (std::size_t i = head.size(); i < line.size() - tail.size(); ++i)
    if (!is_digit(line[i])) return false;
  return true;
}

std::string quoted(const std::string& s) { return "'" + shortened(s, 60) + "'"; }

}  // namespace

std::optional<nlohmann::json> parse_printed_number(std::string_view text) {
  const std::string t = trim(text);
  std::string_view s = t;
  std::string sign;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    if (s[0] == '-') sign = "-";
    s.remove_prefix(1);
  }
  // integer part [. fraction] [e exponent]; at least one digit before or after the point
  std::size_t i = 0;
  while (i < s.size() && (is_digit(s[i]) || s[i] == ',')) ++i;
  const auto int_part = integer_digits(s.substr(0, i));
  if (!int_part) return std::nullopt;
  std::string fraction;
  bool has_point = false, has_exponent = false;
  if (i < s.size() && s[i] == '.') {
    has_point = true;
    const std::size_t start = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    fraction = std::string(s.substr(start, i - start));
  }
  if (int_part->empty() && fraction.empty()) return std::nullopt;
  std::string exponent;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    has_exponent = true;
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const std::size_t digits = j;
    while (j < s.size() && is_digit(s[j])) ++j;
    if (j == digits) return std::nullopt;
    exponent = std::string(s.substr(i, j - i));
    i = j;
  }
  if (i != s.size()) return std::nullopt;
  const std::string plain = sign + (int_part->empty() ? "0" : *int_part);
  if (!has_point && !has_exponent) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(plain.c_str(), &end, 10);
    if (errno == 0 && *end == '\0') return nlohmann::json(v);
    // beyond 64 bits: a double, like the rest
  }
  const std::string number = plain + "." + (fraction.empty() ? "0" : fraction) + exponent;
  const double v = std::strtod(number.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;  // 1e999: no JSON number holds it
  return nlohmann::json(v);
}

Extracted extract_metrics(const std::vector<ExtractSpec>& specs, const std::string& stdout_text, std::int64_t stdout_bytes) {
  Extracted out;
  if (specs.empty()) return out;
  const bool truncated = stdout_bytes != static_cast<std::int64_t>(stdout_text.size());
  std::vector<std::string> lines;
  for (std::string_view rest = stdout_text; !rest.empty();) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string clean = without_ansi(line);
    if (truncated && is_truncation_marker(clean)) clean.clear();
    lines.push_back(std::move(clean));
  }
  for (const auto& spec : specs) {
    bool found = false;
    for (std::size_t n = 0; n < lines.size() && !found; ++n) {
      re2::StringPiece group;  // data() null: the group took no part in the match
      if (!RE2::PartialMatch(lines[n], *spec.regex, &group)) continue;
      found = true;
      const std::string text = group.data() ? std::string(group.data(), group.size()) : "";
      std::optional<nlohmann::json> number;
      if (!spec.duration) number = parse_printed_number(text);
      else if (const auto seconds = parse_duration(text)) number = nlohmann::json(*seconds);
      if (number) {
        out.metrics[spec.name] = *number;
      } else {
        out.notes.push_back("extract: " + spec.name + " = " + quoted(spec.pattern) + " matched line " + std::to_string(n + 1) +
                            " of stdout, but its group " + (group.data() ? "holds " + quoted(text) + ", not a number"
                                                                         : "took no part in the match"));
      }
    }
    if (!found) {
      std::string why = "extract: no line of stdout matches " + spec.name + " = " + quoted(spec.pattern);
      if (stdout_text.empty()) why += " (the run printed nothing to stdout)";
      else if (truncated)
        why += " (stdout was " + std::to_string(stdout_bytes) + " bytes, and only its beginning and end were kept: " +
               "the line may have been in the middle)";
      out.notes.push_back(why);
    }
  }
  return out;
}

void apply_extracts(const std::vector<ExtractSpec>& specs, RunRecord& r) {
  Extracted e = extract_metrics(specs, r.stdout_text, r.stdout_bytes);
  if (!r.metrics.is_object()) r.metrics = nlohmann::json::object();
  for (auto& [name, value] : e.metrics.items()) {
    if (r.metrics.contains(name)) {
      // The script's own figure is the one it meant; the regex may have caught something else.
      e.notes.push_back("extract: " + name + " not taken from stdout: the script reported metric '" + name +
                        "' itself (gilhost.metric), and that value is kept");
      continue;
    }
    r.metrics[name] = value;
  }
  for (const auto& note : e.notes) r.note += (r.note.empty() ? "" : "; ") + note;
}

}  // namespace gilhost
