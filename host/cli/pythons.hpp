#pragma once
// `gilhost pythons`'s table as text: what a terminal of `width` columns shows (0: no limit).
#include <cstddef>
#include <string>
#include <vector>

#include "discover/interpreter.hpp"

namespace gilhost {

// The builds found, one row each. Where `width` is set, why a build cannot be used is not a cell cut
// with "…": the row says "unusable (below)" and the reason follows the table, wrapped, whole.
std::string pythons_table_text(const std::vector<Interpreter>& found, std::size_t width);

// `text` wrapped at spaces to `width` display columns, its first line indented by `lead` spaces and the
// others by `indent` (a word longer than a line stays whole). width 0: one line.
std::string wrap_words(const std::string& text, std::size_t width, std::size_t lead, std::size_t indent);

}  // namespace gilhost
