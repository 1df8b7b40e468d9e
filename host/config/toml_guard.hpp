#pragma once
// Keeps toml++ 3.3.0 (Debian 12) away from its one known undefined behaviour.
//
// Its generated Unicode tables reach a TOML_UNREACHABLE (__builtin_unreachable) when asked whether certain
// non-ASCII characters are whitespace (marzer/tomlplusplus#190, fixed after 3.3.0): exactly the code points
// of is_toml_hazard(), U+00A1-U+0499 (Latin, Greek, Cyrillic), U+2C5E-U+3057 (CJK punctuation, Hiragana, ...)
// and U+FB26-U+FEFE. The parser asks that wherever its lexer happens to look at a character on its own (at
// token boundaries, after backslashes, inside malformed values, ...); a model of where that is was tried,
// and the fuzzer kept finding places it missed.
//
// So toml++ is never shown such a character at all. guard_toml() replaces each by a stand-in, a private-use
// character of plane 15 (U+F0000 + the offset from U+00A0), which toml++ classifies without harm; the
// parsed strings and keys, and toml++'s error messages, get the original characters back from
// restore_toml(). Stand-ins are one code point for one, so every line and column is the file's own. The
// price: a file may not hold a stand-in itself (raw, or as a \U000Fxxxx escape): that is a located error.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace gilhost {

// Whether toml++ 3.3.0's is_non_ascii_horizontal_whitespace() is undefined on `c`.
bool is_toml_hazard(char32_t c);

struct TomlHazard {
  int line = 0, column = 0;  // 1-based; columns count code points, like toml++
  std::string message;
};

struct GuardedToml {
  std::string text;                   // the file, every hazardous character replaced by its stand-in
  std::optional<TomlHazard> reserved;  // the first stand-in the file holds itself, if any
};

GuardedToml guard_toml(std::string_view text);

// Stand-ins back to the characters they stand for: raw ones, and the \U000Fxxxx escapes toml++ writes
// in its error messages.
std::string restore_toml(std::string_view guarded);
// The same for every string and key of a parsed table, in place (source positions are kept).
void restore_toml(toml::table& root);

}  // namespace gilhost
