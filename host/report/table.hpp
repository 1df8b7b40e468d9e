#pragma once
// One table as every format shows it: a header of columns and rows of cell texts, built once; the
// terminal, Markdown and HTML emitters only add their syntax (report/text, markdown, html).
#include <string>
#include <utility>
#include <vector>

#include "report/stats.hpp"

namespace gilhost {

enum class Align { left, right };

struct Column {
  Column(std::string title_, Align align_ = Align::left, bool in_terminal_ = true, std::string terminal_title_ = "")
      : title(std::move(title_)), align(align_), in_terminal(in_terminal_), terminal_title(std::move(terminal_title_)) {}
  std::string title;
  Align align = Align::left;
  // The terminal's narrower view leaves some columns out, and may name one more tersely.
  bool in_terminal = true;
  std::string terminal_title;  // "" = title
  // Where the terminal is too narrow (report/fit): 0 is always kept; the others are left out, highest first.
  int drop = 0;
  // Prose (a view's title, a ratio in words): where the terminal is too narrow its cells are broken at
  // spaces onto more lines rather than cut with "…".
  bool wrap = false;
  Column& dropped_at(int order) {
    drop = order;
    return *this;
  }
  Column& wrapped() {
    wrap = true;
    return *this;
  }
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
  // Columns of `titles`, each aligned as `align` says (left where it says nothing).
  static Table with_columns(const std::vector<std::string>& titles, const std::vector<Align>& align = {});
  void add_row(std::vector<std::string> row);  // short rows are padded with empty cells
  bool empty() const { return rows.empty(); }
};

// A plain text table whose columns size themselves to their widest cell (UTF-8 aware).
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> right_align = {});
  void add_row(std::vector<std::string> row);
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// The terminal's view of a table: its in_terminal columns, under their terminal titles; fitted to `width`
// columns (report/fit) unless it is 0.
std::string render_text_table(const Table& table, std::size_t width = 0);

// `text` with each character that `replacements` names replaced by its text (escaping for a format).
std::string replace_characters(const std::string& text, const std::vector<std::pair<char, const char*>>& replacements);

// "0.312 s ±1.2%"
std::string format_wall(const Stats& s);

}  // namespace gilhost
