#include "report/text_grid.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "report/fit.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

constexpr std::size_t kCaseColumn = 28;  // the case column's share of a block, at most (cut with "…")

Table grid_table(const Grid& grid, const std::vector<std::string>& headings) {
  Table t;
  t.columns.emplace_back("case");
  for (const auto& h : headings) t.columns.emplace_back(h);
  for (std::size_t c = 0; c < grid.cases.size(); ++c) {
    std::vector<std::string> row{grid.cases[c]};
    for (std::size_t b = 0; b < headings.size(); ++b) row.push_back(grid_cell_text(grid.cells[c][b], "  "));
    t.add_row(row);
  }
  return t;
}

}  // namespace

std::vector<std::string> short_build_labels(const std::vector<std::string>& labels) {
  static const std::regex version(R"(^(\d+\.\d+)\.\d+(.*)$)");
  std::vector<std::string> out;
  for (const auto& l : labels) out.push_back(std::regex_replace(l, version, "$1$2"));
  const std::set<std::string> distinct(out.begin(), out.end());
  return distinct.size() == labels.size() ? out : labels;
}

std::vector<Table> grid_blocks(const Grid& grid, std::size_t width) {
  std::vector<std::string> headings;
  for (const auto& col : grid.columns) headings.push_back(col.heading);
  if (width == 0) return {grid_table(grid, headings)};
  // The builds' full labels, as every other table and line names them (a short "3.12" here beside a
  // "3.12.1" in the vs table read as two builds).
  Table t = grid_table(grid, headings);
  // The case column gives up its width first (to kCaseColumn; a sweep keeps its "[...]"): a cut name is
  // still told from its siblings, a cut cell loses its figures.
  if (table_width(t) > width)
    for (auto& row : t.rows) row[0] = shorten_display(row[0], kCaseColumn);
  return column_blocks(t, width, kCaseColumn);
}

std::size_t count_rules(const std::vector<Reading>& readings) {
  std::set<ReadingRule> rules;
  for (const auto& r : readings) rules.insert(r.rule);
  return rules.size();
}

std::vector<std::pair<ReadingRule, std::vector<const Reading*>>> readings_by_rule(const std::vector<Reading>& readings) {
  std::vector<std::pair<ReadingRule, std::vector<const Reading*>>> out;
  for (const auto& r : readings) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& kind) { return kind.first == r.rule; });
    if (it == out.end()) it = out.insert(out.end(), {r.rule, {}});
    it->second.push_back(&r);
  }
  return out;
}

std::vector<std::string> group_readings(const std::vector<Reading>& readings, std::size_t cells) {
  std::vector<std::string> lines;
  for (const auto& [rule, of_kind] : readings_by_rule(readings)) {
    std::vector<std::string> named;
    for (std::size_t k = 0; k < of_kind.size() && k < cells; ++k) named.push_back(of_kind[k]->case_name + " @ " + of_kind[k]->build);
    const std::size_t more = of_kind.size() - named.size();
    lines.push_back(of_kind.front()->text + " — " + join(named, ", ") + (more ? " and " + std::to_string(more) + " more" : "") +
                    (of_kind.size() > 1 ? " (figures of the first)" : ""));
  }
  return lines;
}

}  // namespace gilhost
