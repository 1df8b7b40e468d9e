#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/strings.hpp"

namespace gilhost {

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
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], display_width(r[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::string pad(w[i] - display_width(cells[i]), ' ');
      out += i == 0 ? "" : "  ";
      out += right_[i] ? pad + cells[i] : cells[i] + (i + 1 == cells.size() ? "" : pad);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
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

std::string format_wall(const Stats& s) {
  if (s.n == 0) return "-";
  std::string out = format_seconds(s.median);
  if (s.n > 1) out += fmt::format(" ±{:.1f}%", 100.0 * s.relative_spread());
  return out;
}

std::array<std::string, 3> timing_texts(const Cell& cell) {
  if (cell.wall_s.n == 0) return {"-", "-", "-"};
  return {format_seconds(cell.wall_s.median), format_seconds(cell.wall_s.min) + "–" + format_seconds(cell.wall_s.max),
          fmt::format("{:.2f}", cell.cpu_per_wall.median)};
}

namespace {

std::string verdict(const Cell& c) {
  if (c.runs.empty()) return "";
  return c.expectations_ok() ? "✓" : "✗";
}

std::string interpreter_heading(const Summary& s, const std::string& label) {
  for (const auto& [key, cell] : s.cells)
    if (key.second == label) {
      std::string h = label;
      if (cell.mode == "exec") h += " (exec)";
      return h;
    }
  return label;
}

}  // namespace

std::string render_report(const Summary& s, const ReportContext& ctx) {
  std::string out;
  out += s.experiment + (ctx.description.empty() ? "" : " — " + ctx.description) + "\n";
  if (!ctx.machine.is_null()) {
    int cores = ctx.machine.value("cores", 0);
    out += fmt::format("{} · {} cores · {} · effective parallelism = CPU / wall (at most {} here)\n",
                       ctx.machine.value("cpu_model", "unknown CPU"), cores, ctx.machine.value("kernel", ""), cores);
  }
  out += "each cell: median wall time of the case ± MAD, the case's result, ✓/✗ expectations\n\n";

  // The grid: cases down, interpreters across.
  std::vector<std::string> header{"case"};
  for (const auto& i : s.interpreters) header.push_back(interpreter_heading(s, i));
  TextTable grid(header);
  for (const auto& c : s.cases) {
    std::vector<std::string> row{c};
    for (const auto& i : s.interpreters) {
      const Cell* cell = s.cell(c, i);
      if (!cell) {
        row.push_back("skipped");
        continue;
      }
      if (cell->runs.empty()) {
        row.push_back("(warm-up only)");
        continue;
      }
      std::string text = format_wall(cell->wall_s) + "  " + cell->result_text + " " + verdict(*cell);
      if (cell->statuses != "ok" && cell->result_text != cell->statuses) text += " [" + cell->statuses + "]";
      row.push_back(text);
    }
    grid.add_row(row);
  }
  out += grid.render();

  if (ctx.details) {
    out += "\n";
    TextTable details({"case", "python", "runs", "wall median", "min–max", "cpu/wall", "ratio", "peak RSS", "maxrss",
                       "threads", "procs", "gil", "status"},
                      {false, false, true, true, true, true, true, true, true, true, true, false, false});
    for (const auto& c : s.cases)
      for (const auto& i : s.interpreters) {
        const Cell* cell = s.cell(c, i);
        if (!cell || cell->runs.empty()) continue;
        std::string ratio = "-";
        if (cell->ratio) ratio = fmt::format("{:.2f}x", cell->ratio->median);
        const auto timing = timing_texts(*cell);
        details.add_row({c, i, std::to_string(cell->runs.size()), timing[0], timing[1], timing[2], ratio,
                         format_bytes(cell->peak_tree_rss_bytes), format_bytes(cell->max_rss_bytes),
                         std::to_string(cell->peak_threads), std::to_string(cell->peak_processes), gil_text(*cell), cell->statuses});
      }
    out += details.render();
    if (!s.baseline.empty()) out += "ratio: wall / wall of '" + s.baseline + "' on the same build, paired by round (median)\n";
  }

  std::vector<std::string> failures;
  for (const auto& c : s.cases)
    for (const auto& i : s.interpreters) {
      const Cell* cell = s.cell(c, i);
      if (!cell) continue;
      for (const auto& f : cell->failures)
        failures.push_back(fmt::format("  ✗ {} @ {} ({} of {} runs): {}", c, i, cell->runs_failed_expectations,
                                       cell->runs.size(), f));
    }
  if (!failures.empty()) out += "\nexpectations not met:\n" + join(failures, "\n") + "\n";
  if (!s.skips.empty()) {
    // One line per reason: a case swept over 4 values on 4 old builds is one fact, not 16.
    std::vector<std::string> reasons;
    std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> by_reason;
    for (const auto& k : s.skips) {
      const std::string reason = k.value("reason", "");
      if (!by_reason.count(reason)) reasons.push_back(reason);
      auto& [cases, builds] = by_reason[reason];
      std::string c = k.value("case", "");
      add_unique(cases, c.substr(0, c.find('[')));
      std::string who = k.value("label", k.value("interpreter", ""));
      add_unique(builds, who.empty() ? k.value("selector", "") : who);
    }
    out += "\nskipped:\n";
    for (const auto& reason : reasons) {
      const auto& [cases, builds] = by_reason[reason];
      out += "  " + (cases.empty() ? "" : join(cases, ", ") + " @ ") + join(builds, ", ") + ": " + reason + "\n";
    }
  }
  if (ctx.article.is_object() && !ctx.article.empty()) {
    out += "\nthe article reported:\n";
    for (const auto& [k, v] : ctx.article.items())
      out += "  " + k + ": " + (v.is_string() ? v.get<std::string>() : v.dump()) + "\n";
  }
  if (!ctx.results_path.empty()) out += "\nresults: " + ctx.results_path + "\n";
  return out;
}

}  // namespace gilhost
