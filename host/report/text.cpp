#include "report/text.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "report/fit.hpp"
#include "report/state_bar.hpp"
#include "report/text_grid.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

// What a view's ratio cell without a direction means, under the views, where one is shown.
std::string views_legend_text(const std::vector<Headline>& headlines, std::size_t width) {
  bool unsure = false, no_difference = false;
  for (const Headline& h : headlines)
    for (const HeadlineValue& v : h.values) {
      unsure = unsure || v.text.find("x?") != std::string::npos;
      no_difference = no_difference || starts_with(v.text, "no diff.");
    }
  std::string out;
  if (unsure)
    out += wrap_text("x?: fewer than 6 pairs, too few for a 95 % interval (one pair has none): the figure, no direction stated", width) + "\n";
  if (no_difference) out += wrap_text("no diff.: no measurable difference, the 95 % interval holds 1", width) + "\n";
  return out;
}

constexpr std::size_t kTerminalWidth = 80;
constexpr std::size_t kCellsPerReading = 4;  // named per reading where the width is limited; the rest counted

// `text` in lines of at most `width` columns, broken at spaces: the first line after `indent`, the others
// after `indent` and two more spaces.
std::string wrapped(const std::string& text, std::size_t width, const std::string& indent) {
  const std::string hanging = indent + "  ";
  std::string out, line = indent;
  std::vector<std::string> words;
  for (auto& word : split(text, ' ')) {
    // "38 %" (and "38 %,") stays on one line: a unit is not a word of its own; nor is "line 3)" of a location.
    const bool line_number = !words.empty() && words.back() == "line" && !word.empty() && std::isdigit(static_cast<unsigned char>(word[0]));
    if ((starts_with(word, "%") || line_number) && !words.empty()) words.back() += " " + word;
    else words.push_back(std::move(word));
  }
  for (const auto& word : words) {
    const bool fresh = line == indent || line == hanging;
    if (!fresh && display_width(line) + 1 + display_width(word) > width) {
      out += line + "\n";
      line = hanging;
    }
    line += (line == indent || line == hanging ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string readings_text(const std::vector<Reading>& readings, const TextOptions& o) {
  std::string out = "\nreadings (thread states: median shares of the Python threads' time):\n";
  if (o.width == 0) {  // everything, one line each
    for (const auto& r : readings) out += wrapped(r.case_name + " @ " + r.build + ": " + r.text, kTerminalWidth, "  ");
    return out;
  }
  for (const auto& group : group_readings(readings, kCellsPerReading))
    out += wrapped(group, std::min<std::size_t>(o.width, kTerminalWidth), "  ");
  const std::size_t shown = std::min(readings.size(), kCellsPerReading * count_rules(readings));
  if (shown < readings.size() && !o.results_file.empty())
    out += kUnwrappedLine + ("  (each reading of every cell: gilhost report " + o.results_file + " --wide)") + "\n";
  return out;
}

// A cell every measured run of which failed: it has no figure to be short of a target with.
bool failed_throughout(const Section& s, const std::string& note) {
  return std::any_of(s.failed_cells.failed.begin(), s.failed_cells.failed.end(), [&](const FailedCell& c) {
    return c.failed == c.runs && starts_with(note, c.case_name + " @ " + c.build + ":");
  });
}

// What the figures cannot claim: unstable cells, unknown GIL waits, cells short of the precision target (not
// those that failed every run: the failures say why they have no figure).
std::string evidence_text(const Section& s) {
  std::string out;
  if (!s.unstable.empty()) out += "\nunstable cells (!):\n";
  for (const auto& line : s.unstable) out += "  " + line + "\n";
  if (!s.gil_unknown.empty()) out += "\nGIL wait unknown (?):\n";
  for (const auto& line : s.gil_unknown) out += "  " + line + "\n";
  std::string short_of;
  for (const auto& line : s.precision_notes)
    if (!failed_throughout(s, line)) short_of += "  " + line + "\n";
  if (!short_of.empty()) out += "\nshort of the precision target:\n" + short_of;
  return out;
}

// Tables one under the other: a wide one's blocks (report/fit's column_blocks, text_grid's grid_blocks).
std::string blocks_text(const std::vector<Table>& blocks, std::size_t width) {
  std::string out;
  for (const Table& block : blocks) out += (out.empty() ? "" : "\n") + render_text_table(block, width);
  return out;
}

// A wide table in blocks of its first column and the columns that fit beside it.
std::string wide_table_text(const Table& table, std::size_t width) {
  constexpr std::size_t kKeyColumn = 36;
  return blocks_text(column_blocks(table, width, kKeyColumn), width);
}

// The expectations that did not hold; not "status ok" of a cell listed as failed (it says why, once).
std::string expectations_text(const Section& s) {
  std::string out;
  for (const auto& f : s.failures) {
    const bool said = starts_with(f.failure, "status ok:") &&
                      std::any_of(s.failed_cells.failed.begin(), s.failed_cells.failed.end(),
                                  [&](const FailedCell& c) { return c.case_name == f.case_name && c.build == f.build; });
    if (!said) out += fmt::format("  ✗ {} @ {} ({} of {} runs): {}\n", f.case_name, f.build, f.failed_runs, f.runs, f.failure);
  }
  return out.empty() ? out : "\nexpectations not met:\n" + out;
}

std::string section_text(const Section& s, const TextOptions& o) {
  std::string out = s.title + (s.description.empty() ? "" : " — " + s.description) + "\n";
  if (s.machine) {
    const MachineRecord& m = *s.machine;
    out += fmt::format("{} · {} cores · {} · effective parallelism = CPU / wall (at most {} here)\n", m.cpu_model, m.cores,
                       m.kernel, m.cores);
  }
  out += "each cell: median case time (host clock, the call alone), its interval (95 %; the range below 6 runs), "
         "n=runs, ! unstable (why below), the case's result, ✓/✗ expectations\n\n";
  out += blocks_text(grid_blocks(s.grid, o.width), o.width);
  out += failures_text(s.failed_cells);

  if (s.details) {
    out += "\n" + render_text_table(s.details_table, o.width);
    if (!s.summary.baseline.empty())
      out += "ratio: wall / wall of '" + s.summary.baseline +
             "' on the same build, paired by round (Hodges-Lehmann, its interval; \"no diff.\": no measurable "
             "difference, the 95 % interval holds 1; \"x?\": too few runs for a 95 % interval (one run: none))\n";
  }
  for (const auto& sc : s.scaling)
    out += "\nscaling of " + sc.title() + " (speedup · efficiency)\n" + render_text_table(sc.table, o.width) + scaling_caption(sc) + "\n";
  if (!s.metrics_table.empty()) {
    out += "\nmetrics (the scripts' own figures: median of the ok runs ± MAD)\n" + render_text_table(s.metrics_table, o.width);
    for (const auto& source : s.metric_sources) out += "  " + source + "\n";
  }
  out += expectations_text(s);
  if (!s.skip_groups.empty()) {
    out += "\nskipped:\n";
    for (const auto& g : s.skip_groups)
      out += "  " + (g.cases.empty() ? "" : join(g.cases, ", ") + " @ ") + join(g.builds, ", ") + ": " + g.reason + "\n";
  }
  if (!s.article_table.empty()) {
    out += "\nthe article reported:\n";
    for (const auto& row : s.article_table.rows) out += "  " + row[0] + ": " + row[1] + "\n";
  }
  if (!s.sources.empty()) out += "\n" + (kUnwrappedLine + ("results: " + join(s.sources, ", "))) + "\n";

  if (s.multi_host()) {
    out += "machines:\n";
    for (const auto& m : s.machines)
      out += "  " + host_label(m) + ": " + machine_summary(m) + " — " + join(s.builds_on(m.hostname), ", ") + "\n";
  }
  if (s.compares_builds() && !s.vs_baseline.empty()) {  // no table of "-" where no cell has a ratio
    out += "\n" + wide_table_text(s.vs_baseline_table, o.width);
    const bool by_metric = std::any_of(s.notes.begin(), s.notes.end(), [](const std::string& n) { return starts_with(n, "compared: "); });
    out += "vs " + s.baseline_python + (by_metric ? ": the compared figure (note below) / that of the " : ": wall / wall of the ") +
           s.baseline_python +
           " build on the same machine, same case, paired by repeat (Hodges-Lehmann, its interval)\n";
  }
  for (const auto& note : s.notes) out += "note: " + note + "\n";
  out += evidence_text(s);
  // The answer last, nearest the prompt: the views, then what the threads' time says.
  if (!s.headlines.empty()) {
    out += "\nviews (the experiment file's [[view]]):\n" + wide_table_text(s.headlines_table, o.width);
    out += views_legend_text(s.headlines, o.width);
  }
  out += states_block_text(s.summary, o.width == 0 ? 0 : std::min(o.width, kTerminalWidth), o.results_file);
  if (!s.readings.empty()) out += readings_text(s.readings, o);
  return out;
}

// Each line wider than `width` broken at spaces (the tables fit already: this is the prose around them).
std::string fitted_lines(const std::string& text, std::size_t width) {
  if (width == 0 || text.empty()) return text;
  std::string out;
  for (auto line : split(text, '\n')) {
    if (!line.empty() && line.front() == kUnwrappedLine) {  // a traceback line, a path: as it is
      out += line.substr(1) + "\n";
      continue;
    }
    if (display_width(line) <= width) {
      out += line + "\n";
      continue;
    }
    const std::size_t indent = line.find_first_not_of(' ');
    out += wrapped(line.substr(indent), width, std::string(indent, ' '));
  }
  out.pop_back();  // split gives the line after the last "\n" too
  return out;
}

}  // namespace

std::string render_text(const ReportModel& model, const TextOptions& options) {
  std::string out;
  for (std::size_t n = 0; n < model.sections.size(); ++n)
    out += (n ? "\n" : "") + fitted_lines(section_text(model.sections[n], options), options.width);
  // At any width (0 too), no mark is left for a reader: fitted_lines takes them off where it wraps.
  out.erase(std::remove(out.begin(), out.end(), kUnwrappedLine), out.end());
  return out;
}

}  // namespace gilhost
