#include "report/text.hpp"

#include <fmt/format.h>

#include "util/strings.hpp"

namespace gilhost {

namespace {

constexpr std::size_t kTerminalWidth = 80;

// `text` in lines of at most `width` columns, broken at spaces: the first line after `indent`, the others
// after `indent` and two more spaces.
std::string wrapped(const std::string& text, std::size_t width, const std::string& indent) {
  const std::string hanging = indent + "  ";
  std::string out, line = indent;
  for (const auto& word : split(text, ' ')) {
    const bool fresh = line == indent || line == hanging;
    if (!fresh && display_width(line) + 1 + display_width(word) > width) {
      out += line + "\n";
      line = hanging;
    }
    line += (line == indent || line == hanging ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string readings_text(const std::vector<Reading>& readings) {
  std::string out = "\nreadings (thread states: median shares of the Python threads' time):\n";
  for (const auto& r : readings) out += wrapped(r.case_name + " @ " + r.build + ": " + r.text, kTerminalWidth, "  ");
  return out;
}

std::string grid_text(const Grid& grid) {
  std::vector<std::string> header{"case"};
  for (const auto& col : grid.columns) header.push_back(col.heading);
  TextTable t(header);
  for (std::size_t c = 0; c < grid.cases.size(); ++c) {
    std::vector<std::string> row{grid.cases[c]};
    for (const auto& cell : grid.cells[c]) row.push_back(grid_cell_text(cell, "  "));
    t.add_row(row);
  }
  return t.render();
}

std::string section_text(const Section& s) {
  std::string out = s.title + (s.description.empty() ? "" : " — " + s.description) + "\n";
  if (s.machine) {
    const MachineRecord& m = *s.machine;
    out += fmt::format("{} · {} cores · {} · effective parallelism = CPU / wall (at most {} here)\n", m.cpu_model, m.cores,
                       m.kernel, m.cores);
  }
  out += "each cell: median wall time of the case ± MAD, the case's result, ✓/✗ expectations\n\n";
  out += grid_text(s.grid);
  out += failures_text(s.failed_cells);

  if (!s.headlines.empty()) out += "\nviews (the experiment file's [[view]]):\n" + render_text_table(s.headlines_table);
  for (const auto& sc : s.scaling)
    out += "\nscaling of " + sc.title() + " (speedup · efficiency)\n" + render_text_table(sc.table) + scaling_caption(sc) + "\n";
  if (!s.metrics_table.empty()) {
    out += "\nmetrics (the scripts' own figures: median of the ok runs ± MAD)\n" + render_text_table(s.metrics_table);
    for (const auto& source : s.metric_sources) out += "  " + source + "\n";
  }

  if (s.details) {
    out += "\n" + render_text_table(s.details_table);
    if (!s.summary.baseline.empty())
      out += "ratio: wall / wall of '" + s.summary.baseline + "' on the same build, paired by round (median)\n";
  }
  if (!s.readings.empty()) out += readings_text(s.readings);
  if (!s.failures.empty()) {
    out += "\nexpectations not met:\n";
    for (const auto& f : s.failures)
      out += fmt::format("  ✗ {} @ {} ({} of {} runs): {}\n", f.case_name, f.build, f.failed_runs, f.runs, f.failure);
  }
  if (!s.skip_groups.empty()) {
    out += "\nskipped:\n";
    for (const auto& g : s.skip_groups)
      out += "  " + (g.cases.empty() ? "" : join(g.cases, ", ") + " @ ") + join(g.builds, ", ") + ": " + g.reason + "\n";
  }
  if (!s.article_table.empty()) {
    out += "\nthe article reported:\n";
    for (const auto& row : s.article_table.rows) out += "  " + row[0] + ": " + row[1] + "\n";
  }
  if (!s.sources.empty()) out += "\nresults: " + join(s.sources, ", ") + "\n";

  if (s.multi_host()) {
    out += "machines:\n";
    for (const auto& m : s.machines)
      out += "  " + host_label(m) + ": " + machine_summary(m) + " — " + join(s.builds_on(m.hostname), ", ") + "\n";
  }
  if (s.compares_builds()) {
    out += "\n" + render_text_table(s.vs_baseline_table);
    out += "vs " + s.baseline_python + ": wall / wall of the " + s.baseline_python +
           " build on the same machine, same case, paired by repeat (median ± MAD)\n";
  }
  for (const auto& note : s.notes) out += "note: " + note + "\n";
  return out;
}

}  // namespace

std::string render_text(const ReportModel& model) {
  std::string out;
  for (std::size_t n = 0; n < model.sections.size(); ++n) out += (n ? "\n" : "") + section_text(model.sections[n]);
  return out;
}

}  // namespace gilhost
