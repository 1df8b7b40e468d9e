#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gilhost {

std::vector<std::string> split(std::string_view s, char sep);
std::string trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// Appends `x` unless it is empty or already there (lists in first-seen order).
void add_unique(std::vector<std::string>& v, const std::string& x);
// "1.23 s", "45.6 ms", "789 µs" — three significant digits.
std::string format_seconds(double seconds);
// "42s", "3m07s": elapsed times and ETAs, whole seconds.
std::string format_duration(double seconds);
// "12.3 MB" (decimal units, like the articles).
std::string format_bytes(double bytes);
// An integer with thousands separators: 3000000 -> "3,000,000", -1200 -> "-1,200"; the second takes the
// integer as decimal text (one wider than 64 bits, as JSON may hold).
std::string group_thousands(long long n);
std::string group_thousands(const std::string& decimal);
// Number of terminal columns a UTF-8 string takes (one per code point; enough for our tables).
std::size_t display_width(std::string_view s);
// The UTF-8 bytes of one code point (at most U+10FFFF).
std::string utf8_encode(char32_t cp);
// At most `max_bytes` of `s`, never ending inside a UTF-8 sequence, and "…" after it when cut.
std::string shortened(std::string_view s, std::size_t max_bytes);

// Text from a script or a file (an exception message, a case name, a note) made safe for a terminal:
// C0 controls but newline, tab and a CR before a newline, DEL, C1 controls (U+0080-U+009F) and bytes that are not UTF-8 are
// shown as "\\x1b", "\\u009b" and "\\xff", so no escape sequence (clear screen, an OSC title, a
// hyperlink) reaches the terminal. `one_line` also escapes newlines and tabs ("\\n", "\\t").
std::string escape_controls(std::string_view s, bool one_line = false);
// Whether `s` is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

}  // namespace gilhost
