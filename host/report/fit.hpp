#pragma once
// Tables that fit a terminal: the least useful columns left out first, long cells cut with "…", and the
// width to fit (the terminal's, $COLUMNS, or none when stdout is a file).
#include <cstddef>
#include <string>
#include <vector>

#include "report/table.hpp"

namespace gilhost {

// The terminal's view of `table` (its in_terminal columns, under their terminal titles), no wider than
// `width` columns where it can be: columns with a drop order left out, highest first, then the widest
// column's cells cut with "…" in their middle (to no less than 8 columns); a prose column's (Column::wrap)
// broken at spaces instead, into cells of several lines. width 0: only the terminal's view.
Table fit_table(const Table& table, std::size_t width);

// `table` (its terminal's view) as tables of its first column and as many of the others as fit `width`
// with the first column cut to `key_max` at most: a wide table in blocks rather than every cell cut.
// One fitted table where the whole fits, or width is 0.
std::vector<Table> column_blocks(const Table& table, std::size_t width, std::size_t key_max);

// How wide a cell renders: its widest line (a cell of several lines is one fit_table wrapped).
std::size_t cell_width(const std::string& cell);

// How wide `table` renders (render_text_table): its widest cells, two spaces between columns.
std::size_t table_width(const Table& table);

// `text` cut to `width` display columns, its last one "…" when cut.
std::string truncate_display(const std::string& text, std::size_t width);

// `text` cut to `width` display columns in its middle: a sweep case's "[...]" kept (whole where it leaves
// half the width to the name, "subinterpr…[workers=8]", else its values alone, "subinterpreters_sh…[8]");
// other text keeps as much of its end as of its start.
std::string shorten_display(const std::string& text, std::size_t width);

// `text` with each line wider than `width` broken at spaces, never inside a word (a path or a date longer
// than the width stays whole on its own line): the continuation lines after the line's own indent and
// `hang` more spaces. width 0: `text` as it is.
std::string wrap_text(const std::string& text, std::size_t width, std::size_t hang = 2);

// The width stdout's report should fit: the terminal's (TIOCGWINSZ, else $COLUMNS, else 80) when stdout
// is a terminal, else `not_a_terminal` (0: no limit).
std::size_t output_width(std::size_t not_a_terminal);

}  // namespace gilhost
