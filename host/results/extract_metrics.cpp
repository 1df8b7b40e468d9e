#include "results/extract_metrics.hpp"

#include <pthread.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <functional>
#include <regex>

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

// The marker the capture puts where it dropped the middle of a long output (run/child.cpp).
bool is_truncation_marker(const std::string& line) {
  static const std::regex marker(R"(\[\.\.\. [0-9]+ bytes not kept \.\.\.\])");
  return std::regex_match(line, marker);
}

// libstdc++'s regex executor recurses at least once per character of the line (hundreds of bytes of stack
// each, more under ASan): a long line would overflow the main thread's 8 MiB stack. So the search runs on
// a thread of its own with room for the longest line searched; the stack is address space, touched only
// as deep as it goes.
constexpr std::size_t kSearchStackBytes = std::size_t(256) << 20;

// false when no such thread can be had (address space limits): then the caller runs it where it is.
bool on_big_stack(const std::function<void()>& fn) {
  struct Call {
    const std::function<void()>* fn;
    std::exception_ptr error;
  } call{&fn, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kSearchStackBytes);
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, [](void* p) -> void* {
    auto* c = static_cast<Call*>(p);
    try {
      (*c->fn)();
    } catch (...) {
      c->error = std::current_exception();
    }
    return nullptr;
  }, &call);
  pthread_attr_destroy(&attr);
  if (rc != 0) return false;
  pthread_join(thread, nullptr);
  if (call.error) std::rethrow_exception(call.error);
  return true;
}

std::string quoted(const std::string& s) { return "'" + (s.size() > 60 ? s.substr(0, 60) + "…" : s) + "'"; }

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

namespace {

Extracted search_lines(const std::vector<ExtractSpec>& specs, const std::string& stdout_text, std::int64_t stdout_bytes) {
  Extracted out;
  const bool truncated = stdout_bytes != static_cast<std::int64_t>(stdout_text.size());
  std::vector<std::string> lines;
  for (std::string_view rest = stdout_text; !rest.empty();) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string clean = without_ansi(line.substr(0, kExtractLineLimit));
    if (truncated && is_truncation_marker(clean)) clean.clear();
    lines.push_back(std::move(clean));
  }
  for (const auto& spec : specs) {
    bool found = false;
    std::string failed;
    for (std::size_t n = 0; n < lines.size() && !found && failed.empty(); ++n) {
      std::smatch m;
      try {
        if (!std::regex_search(lines[n], m, spec.regex)) continue;
      } catch (const std::regex_error& e) {  // libstdc++ gives up on some patterns (error_complexity)
        failed = "extract: " + spec.name + " = " + quoted(spec.pattern) + " could not be searched for on line " +
                 std::to_string(n + 1) + " of stdout: " + e.what();
        continue;
      }
      found = true;
      const std::string text = m[1].matched ? m[1].str() : "";
      if (auto number = parse_printed_number(text)) {
        out.metrics[spec.name] = *number;
      } else {
        out.notes.push_back("extract: " + spec.name + " = " + quoted(spec.pattern) + " matched line " + std::to_string(n + 1) +
                            " of stdout, but its group " + (m[1].matched ? "holds " + quoted(text) + ", not a number"
                                                                         : "took no part in the match"));
      }
    }
    if (!failed.empty()) {
      out.notes.push_back(failed);
    } else if (!found) {
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

}  // namespace

Extracted extract_metrics(const std::vector<ExtractSpec>& specs, const std::string& stdout_text, std::int64_t stdout_bytes) {
  if (specs.empty()) return {};
  Extracted out;
  const auto search = [&] { out = search_lines(specs, stdout_text, stdout_bytes); };
  if (!on_big_stack(search)) search();
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
