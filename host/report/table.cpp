#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/fit.hpp"
#include "util/strings.hpp"

namespace gilhost {

Table Table::with_columns(const std::vector<std::string>& titles, const std::vector<Align>& align) {
  Table t;
  for (std::size_t i = 0; i < titles.size(); ++i) t.columns.emplace_back(titles[i], i < align.size() ? align[i] : Align::left);
  return t;
}

void Table::add_row(std::vector<std::string> row) {
  row.resize(columns.size());
  rows.push_back(std::move(row));
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> right_align)
    : header_(std::move(header)), right_(std::move(right_align)) {
  right_.resize(header_.size(), false);
}

void TextTable::add_row(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

std::string TextTable::render() const {
  std::vector<std::size_t> w(header_.size(), 0);
  for (std::size_t i = 0; i < header_.size(); ++i) w[i] = display_width(header_[i]);
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], cell_width(r[i]));
  auto one_line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::string pad(w[i] - display_width(cells[i]), ' ');
      out += i == 0 ? "" : "  ";
      out += right_[i] ? pad + cells[i] : cells[i] + (i + 1 == cells.size() ? "" : pad);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  // A cell of several lines (report/fit wrapped it) makes its row as many lines tall, the others blank below.
  auto line = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> split_cells;
    std::size_t height = 1;
    for (const auto& c : cells) {
      split_cells.push_back(c.find('\n') == std::string::npos ? std::vector<std::string>{c} : split(c, '\n'));
      height = std::max(height, split_cells.back().size());
    }
    std::string out;
    for (std::size_t n = 0; n < height; ++n) {
      std::vector<std::string> physical;
      for (const auto& parts : split_cells) physical.push_back(n < parts.size() ? parts[n] : "");
      out += one_line(physical);
    }
    return out;
  };
  std::string out = line(header_);
  std::size_t total = 0;
  for (std::size_t i = 0; i < w.size(); ++i) total += w[i] + (i ? 2 : 0);
  std::string rule;
  for (std::size_t i = 0; i < total; ++i) rule += "─";
  out += rule + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string render_text_table(const Table& table, std::size_t width) {
  if (width > 0) return render_text_table(fit_table(table, width));
  std::vector<std::size_t> shown;
  std::vector<std::string> header;
  std::vector<bool> right;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const Column& c = table.columns[i];
    if (!c.in_terminal) continue;
    shown.push_back(i);
    header.push_back(c.terminal_title.empty() ? c.title : c.terminal_title);
    right.push_back(c.align == Align::right);
  }
  TextTable text(header, right);
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (std::size_t i : shown) cells.push_back(row[i]);
    text.add_row(cells);
  }
  return text.render();
}

std::string replace_characters(const std::string& text, const std::vector<std::pair<char, const char*>>& replacements) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto it = std::find_if(replacements.begin(), replacements.end(), [&](const auto& r) { return r.first == ch; });
    if (it == replacements.end()) out += ch;
    else out += it->second;
  }
  return out;
}

std::string format_wall(const Stats& s) {
  if (s.n == 0) return "-";
  std::string out = format_seconds(s.median);
  if (s.n > 1) out += fmt::format(" ±{:.1f}%", 100.0 * s.relative_spread());
  return out;
}

}  // namespace gilhost
