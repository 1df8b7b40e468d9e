#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gilhost {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  std::size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void add_unique(std::vector<std::string>& v, const std::string& x) {
  if (!x.empty() && std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

namespace {
// snprintf, not fmt: gilhost-runner links this file, and libfmt.so would bring the shared libstdc++ into
// every run's start (about 1 ms: CMakeLists.txt links the runner's own copy statically for that reason).
template <typename... Args>
std::string printf_string(const char* format, Args... args) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, format, args...);
  return std::string(buf, n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1));
}

std::string three_digits(double v, const char* unit) {
  if (v >= 100) return printf_string("%.0f %s", v, unit);
  if (v >= 10) return printf_string("%.1f %s", v, unit);
  return printf_string("%.2f %s", v, unit);
}
}  // namespace

std::string format_seconds(double s) {
  if (!std::isfinite(s)) return "-";
  double a = std::fabs(s);
  if (a >= 1.0) return three_digits(s, "s");
  if (a >= 1e-3) return three_digits(s * 1e3, "ms");
  return three_digits(s * 1e6, "µs");
}

std::string format_duration(double s) {
  if (s < 60) return printf_string("%.0fs", s);
  return printf_string("%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

std::string format_bytes(double b) {
  if (!std::isfinite(b) || b < 0) return "-";
  if (b >= 1e9) return three_digits(b / 1e9, "GB");
  if (b >= 1e6) return three_digits(b / 1e6, "MB");
  if (b >= 1e3) return three_digits(b / 1e3, "kB");
  return printf_string("%.0f B", b);
}

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string utf8_encode(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string shortened(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
  return std::string(s.substr(0, cut)) + "…";
}

namespace {

// The length of the UTF-8 sequence at s[i] (0: not a valid one).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  // RFC 3629's table: no overlong form, no surrogate (U+D800..U+DFFF, ED A0..BF), nothing past U+10FFFF.
  const auto second = len > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
  if (len == 2 && b < 0xC2) return 0;
  if (len == 3 && ((b == 0xE0 && second < 0xA0) || (b == 0xED && second > 0x9F))) return 0;
  if (len == 4 && ((b == 0xF0 && second < 0x90) || (b == 0xF4 && second > 0x8F) || b > 0xF4)) return 0;
  return len;
}

std::string hex_escape(const char* prefix, unsigned value, int digits) {
  static const char hex[] = "0123456789abcdef";
  std::string out = prefix;
  for (int d = digits - 1; d >= 0; --d) out += hex[(value >> (4 * d)) & 0xF];
  return out;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string escape_controls(std::string_view s, bool one_line) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t len = utf8_length(s, i);
    if (len == 0) {
      out += hex_escape("\\x", b, 2);
      ++i;
    } else if (len == 1 && (b < 0x20 || b == 0x7F)) {
      // A CR that ends a line (CSV's CRLF) stays; a lone one, which would overwrite the line, does not.
      const bool crlf = b == '\r' && i + 1 < s.size() && s[i + 1] == '\n';
      if (!one_line && (b == '\n' || b == '\t' || crlf)) out += static_cast<char>(b);
      else if (b == '\n') out += "\\n";
      else if (b == '\t') out += "\\t";
      else out += hex_escape("\\x", b, 2);
      ++i;
    } else if (len == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      out += hex_escape("\\u00", static_cast<unsigned char>(s[i + 1]), 2);  // C1: U+0080..U+009F
      i += 2;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string group_thousands(long long n) { return group_thousands(std::to_string(n)); }

std::string group_thousands(const std::string& raw) {
  if (raw.empty()) return raw;
  const std::size_t sign = raw[0] == '-' ? 1 : 0;
  std::string out = raw.substr(0, sign);
  for (std::size_t i = sign; i < raw.size(); ++i) {
    if (i > sign && (raw.size() - i) % 3 == 0) out += ',';
    out += raw[i];
  }
  return out;
}

}  // namespace gilhost
