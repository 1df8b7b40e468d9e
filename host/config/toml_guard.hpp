#pragma once
// Keeps toml++ 3.3.0 (Debian 12) away from its one known undefined behaviour.
//
// Its generated Unicode tables reach a TOML_UNREACHABLE (__builtin_unreachable) when asked whether many
// non-ASCII characters (U+00A1-U+049A among them: Latin, Greek, Cyrillic) are whitespace
// (marzer/tomlplusplus#190, fixed after 3.3.0). The parser asks that in three places only:
//   1. at token boundaries, outside strings and comments, where TOML allows only ASCII anyway;
//   2. right after a backslash in a multi-line basic string (`"""\é"""`: an unknown escape), or after
//      the spaces and tabs that follow one (`"""\ é"""`: text after a line-ending backslash);
//   3. at the first character after a line-ending backslash in a multi-line basic string, which valid
//      TOML may well hold ("""\⏎ Ünïcode""").
// guard_toml() lexes the text as TOML does (strings, comments, escapes) and finds the first place of kind
// 1 or 2, a located error; for kind 3 it writes the character as the \uXXXX escape it equals, so the
// string's value is unchanged, and remembers the shift so positions can be mapped back.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gilhost {

struct TomlHazard {
  std::size_t offset = 0;  // byte offset in the original text
  int line = 0, column = 0;  // 1-based; columns count code points, like toml++
  std::string message;
};

struct GuardedToml {
  std::string text;  // what toml++ may parse (kind-3 characters escaped)
  std::optional<TomlHazard> hazard;  // the first kind-1 or kind-2 place, if any
  // Escapes written on `line`: a column after `column` there moved right by `delta` code points.
  struct Shift {
    int line, column, delta;
  };
  std::vector<Shift> shifts;
  // The original column of a position in `text` (lines never move).
  int original_column(int line, int column) const;
};

GuardedToml guard_toml(const std::string& text);

}  // namespace gilhost
