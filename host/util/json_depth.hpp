#pragma once
// How deep a JSON text nests, counted without parsing it: what readers check before they parse text from
// outside, so that nothing after them (dump(), display, reports) recurses without a bound.
#include <cstddef>
#include <string_view>

namespace gilhost {

// Deeper than any value gilhost writes: the runner cuts a result at 64 levels.
constexpr int kMaxJsonDepth = 256;

// Whether `text` opens more than `limit` arrays and objects at once (brackets inside strings not counted).
inline bool json_nested_deeper_than(std::string_view text, int limit = kMaxJsonDepth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace gilhost
