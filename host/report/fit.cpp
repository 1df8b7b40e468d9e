#include "report/fit.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "util/strings.hpp"

namespace gilhost {

namespace {

std::vector<std::size_t> column_widths(const Table& t) {
  std::vector<std::size_t> w;
  for (const auto& c : t.columns) w.push_back(display_width(c.terminal_title.empty() ? c.title : c.terminal_title));
  for (const auto& row : t.rows)
    for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) w[i] = std::max(w[i], cell_width(row[i]));
  return w;
}

// A prose cell (a view's title, a ratio in words) broken at spaces into lines of `width` at most, rather
// than cut mid-phrase; a word wider than that is cut in its middle.
std::string wrapped_cell(const std::string& text, std::size_t width) {
  std::string out;
  std::string flowing = text;  // wrapped before: its lines flow again
  std::replace(flowing.begin(), flowing.end(), '\n', ' ');
  for (const auto& line : split(wrap_text(flowing, width, 2), '\n'))  // continued lines indented
    out += (out.empty() ? "" : "\n") + (display_width(line) > width ? shorten_display(line, width) : line);
  return out;
}


// The prose columns (Column::wrap) wrapped first, down to 16 columns: a wrapped title loses nothing, a
// cut figure does.
void wrap_prose(Table& view, std::size_t width) {
  constexpr std::size_t kProseNarrowest = 16;
  for (std::size_t col = 0; col < view.columns.size() && table_width(view) > width; ++col) {
    const std::size_t w = column_widths(view)[col], excess = table_width(view) - width;
    if (!view.columns[col].wrap || w <= kProseNarrowest) continue;
    const std::size_t target = std::max(kProseNarrowest, w - std::min(w, excess));
    for (auto& row : view.rows) row[col] = wrapped_cell(row[col], target);
  }
}

Table without_column(const Table& t, std::size_t col) {
  Table out = t;
  out.columns.erase(out.columns.begin() + static_cast<std::ptrdiff_t>(col));
  for (auto& row : out.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(col));
  return out;
}

// The column to leave out next: the highest drop order, the rightmost of equals; npos when none may go.
std::size_t next_to_drop(const Table& t) {
  std::size_t pick = std::string::npos;
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i].drop > 0 && (pick == std::string::npos || t.columns[i].drop >= t.columns[pick].drop)) pick = i;
  return pick;
}

}  // namespace

std::size_t cell_width(const std::string& cell) {
  std::size_t widest = 0;
  for (const auto& line : split(cell, '\n')) widest = std::max(widest, display_width(line));
  return widest;
}

std::size_t table_width(const Table& table) {
  std::size_t total = 0;
  for (std::size_t w : column_widths(table)) total += w;
  return total + (table.columns.empty() ? 0 : 2 * (table.columns.size() - 1));
}

std::string truncate_display(const std::string& text, std::size_t width) {
  if (display_width(text) <= width) return text;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t len = 1;  // one UTF-8 character
    while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
    if (display_width(out + text.substr(i, len)) + 1 > width) break;
    out += text.substr(i, len);
    i += len;
  }
  return out + "…";
}

Table fit_table(const Table& table, std::size_t width) {
  // The terminal's view first: its columns, under their terminal titles.
  Table view;
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < table.columns.size(); ++i)
    if (table.columns[i].in_terminal) {
      shown.push_back(i);
      view.columns.push_back(table.columns[i]);
    }
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (std::size_t i : shown) cells.push_back(i < row.size() ? row[i] : "");
    view.rows.push_back(cells);
  }
  if (width == 0) return view;
  for (std::size_t col; table_width(view) > width && (col = next_to_drop(view)) != std::string::npos;)
    view = without_column(view, col);
  wrap_prose(view, width);
  // Still too wide: cut the widest column's cells, a column at a time, down to 8 columns each.
  constexpr std::size_t kNarrowest = 8;
  while (table_width(view) > width) {
    const std::vector<std::size_t> w = column_widths(view);
    const auto widest = static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
    if (w[widest] <= kNarrowest) break;
    // Down to the next widest column at most, so the cuts share out rather than empty one column.
    std::vector<std::size_t> sorted = w;
    std::sort(sorted.rbegin(), sorted.rend());
    const std::size_t excess = table_width(view) - width, next = sorted.size() > 1 ? sorted[1] : 0;
    std::size_t target = std::max({kNarrowest, w[widest] - std::min(w[widest], excess), next});
    if (target >= w[widest]) target = w[widest] - 1;
    for (auto& row : view.rows)
      row[widest] = view.columns[widest].wrap ? wrapped_cell(row[widest], target) : shorten_display(row[widest], target);
    std::string& title = view.columns[widest].terminal_title.empty() ? view.columns[widest].title : view.columns[widest].terminal_title;
    title = truncate_display(title, target);
  }
  return view;
}

namespace {

// Column 0 and the columns [first, end) of `t`.
Table key_and_columns(const Table& t, std::size_t first, std::size_t end) {
  Table out;
  out.columns.push_back(t.columns[0]);
  for (std::size_t i = first; i < end; ++i) out.columns.push_back(t.columns[i]);
  for (const auto& row : t.rows) {
    std::vector<std::string> cells{row.empty() ? "" : row[0]};
    for (std::size_t i = first; i < end; ++i) cells.push_back(i < row.size() ? row[i] : "");
    out.rows.push_back(std::move(cells));
  }
  return out;
}

}  // namespace

std::vector<Table> column_blocks(const Table& table, std::size_t width, std::size_t key_max) {
  const Table whole = fit_table(table, 0);  // the terminal's columns
  if (width == 0 || table_width(whole) <= width || whole.columns.size() < 3) return {fit_table(table, width)};
  const std::size_t key_full = table_width(key_and_columns(whole, 1, 1));
  auto column_width = [&](std::size_t i) { return table_width(key_and_columns(whole, i, i + 1)) - key_full - 2; };
  std::vector<Table> blocks;
  for (std::size_t first = 1; first < whole.columns.size();) {
    std::size_t end = first + 1, used = std::min(key_max, key_full) + 2 + column_width(first);
    for (; end < whole.columns.size() && used + 2 + column_width(end) <= width; ++end) used += 2 + column_width(end);
    blocks.push_back(fit_table(key_and_columns(whole, first, end), width));
    first = end;
  }
  return blocks;
}

std::string shorten_display(const std::string& text, std::size_t width) {
  if (display_width(text) <= width || width < 5) return truncate_display(text, width);
  const std::size_t bracket = text.rfind('[');
  if (bracket != std::string::npos && bracket > 0 && text.back() == ']') {
    // A sweep case: its "[...]" tells it from its siblings. Whole where it leaves half the width to the name,
    // else its values alone ("[8]").
    std::string tail = text.substr(bracket);
    if (display_width(tail) > width / 2) {
      std::vector<std::string> values;
      for (const auto& kv : split(text.substr(bracket + 1, text.size() - bracket - 2), ','))
        values.push_back(kv.substr(kv.find('=') + 1));
      tail = "[" + join(values, ",") + "]";
    }
    if (display_width(tail) + 4 <= width)
      return truncate_display(text.substr(0, bracket), width - display_width(tail)) + tail;
  }
  // Else as much of the end as of the start.
  const std::size_t keep_end = (width - 1) / 2;
  std::size_t i = text.size(), kept = 0;
  while (i > 0 && kept < keep_end) {
    --i;
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++kept;
  }
  return truncate_display(text.substr(0, i), width - kept) + text.substr(i);
}

namespace {

std::string wrap_line(const std::string& line, std::size_t width, std::size_t hang) {
  const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
  const std::string first = line.substr(0, indent), next = std::string(indent + hang, ' ');
  std::string out, current = first;
  for (const auto& word : split(line.substr(indent), ' ')) {
    if (word.empty()) continue;
    const bool fresh = current == first || current == next;
    if (!fresh && display_width(current) + 1 + display_width(word) > width) {
      out += current + "\n";
      current = next;
    }
    current += (current == first || current == next ? "" : " ") + word;
  }
  return out + current;
}

}  // namespace

std::string wrap_text(const std::string& text, std::size_t width, std::size_t hang) {
  if (width == 0) return text;
  std::string out;
  const std::vector<std::string> lines = split(text, '\n');
  for (std::size_t n = 0; n < lines.size(); ++n) {
    out += display_width(lines[n]) <= width ? lines[n] : wrap_line(lines[n], width, hang);
    if (n + 1 < lines.size()) out += "\n";
  }
  return out;
}

std::size_t output_width(std::size_t not_a_terminal) {
  // $COLUMNS first: a shell exports it only when asked to, and then it is meant.
  if (const char* columns = std::getenv("COLUMNS"); columns && std::atoi(columns) > 0)
    return static_cast<std::size_t>(std::atoi(columns));
  if (!::isatty(STDOUT_FILENO)) return not_a_terminal;
  winsize ws{};
  return ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
}

}  // namespace gilhost
