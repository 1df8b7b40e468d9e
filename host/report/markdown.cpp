#include "report/markdown.hpp"

#include <fmt/format.h>

#include "report/markup.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::string markdown_escape(const std::string& s) {
  // Control characters shown escaped first (their backslashes then escaped as any other).
  return replace_characters(escape_controls(s), {{'|', "\\|"}, {'\\', "\\\\"}, {'*', "\\*"}, {'`', "\\`"}, {'<', "&lt;"}, {'>', "&gt;"},
                                {'&', "&amp;"}, {'\n', "<br>"}, {'\r', ""}});
}

namespace {

const auto esc = markdown_escape;

// A path as inline code in a table cell: pipes escaped (GFM strips the backslash), no backticks inside.
std::string code(const std::string& s) {
  if (s.empty()) return "-";
  if (s.find('`') != std::string::npos || s.find('\n') != std::string::npos) return esc(s);
  std::string out = "`";
  for (char ch : escape_controls(s, true)) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out + "`";
}

std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += " " + c + " |";
  return out + "\n";
}

std::string rule(const std::vector<Align>& align) {
  std::string out = "|";
  for (Align a : align) out += a == Align::right ? "---:|" : "---|";
  return out + "\n";
}

class MarkdownMarkup : public Markup {
 public:
  std::string escape(const std::string& text) const override { return esc(text); }
  std::string heading(const std::string& text) const override { return "### " + esc(text) + "\n\n"; }
  std::string table(const Table& t, const std::string&) const override { return markdown_table(t) + "\n"; }
  std::string paragraph(const std::string& markup, const std::string&) const override { return markup + "\n\n"; }
  std::string note(const std::string& text) const override { return "> " + esc(text) + "\n\n"; }
  std::string list(const std::vector<std::string>& items, const std::string&) const override {
    std::string out;
    for (const auto& item : items) out += "- " + item + "\n";
    return out + "\n";
  }
  std::string strong(const std::string& markup) const override { return "**" + markup + "**"; }
  std::string quote(const std::string& text) const override { return "`" + text + "`"; }
  std::string verdict(bool ok) const override { return ok ? "✓" : "✗"; }
  std::string all_held_mark() const override { return ""; }
};

std::string builds_md(const Section& s) {
  std::string out = row({"build", "version", "free-threaded", "mode", "compiler", "found via", "host", "executable"}) +
                    rule(std::vector<Align>(8, Align::left));
  for (const auto& b : s.builds)
    out += row({esc(b.label), esc(b.version), b.free_threaded ? "yes" : "no", esc(b.mode), esc(b.compiler.empty() ? "-" : b.compiler),
                esc(b.source.empty() ? "-" : b.source), esc(b.host), code(b.executable)});
  return out;
}

std::string grid_md(const Grid& grid) {
  std::vector<std::string> header{"case"};
  for (const auto& col : grid.columns) header.push_back(esc(col.heading));
  std::string out = row(header) + rule(std::vector<Align>(header.size(), Align::left));
  for (std::size_t c = 0; c < grid.cases.size(); ++c) {
    std::vector<std::string> cells{esc(grid.cases[c])};
    for (const auto& cell : grid.cells[c]) cells.push_back(esc(grid_cell_text(cell, " · ")));
    out += row(cells);
  }
  return out;
}

std::string facts_md(const Section& s) {
  std::vector<std::string> facts;
  if (!s.profile().empty()) facts.push_back("profile `" + s.profile() + "`");
  if (!s.runs_per_cell.empty()) facts.push_back(s.runs_per_cell);
  if (!s.params.empty()) facts.push_back("params " + esc(s.params));
  std::vector<std::string> files;
  for (const auto& f : s.sources) files.push_back(code(f));
  if (!files.empty()) facts.push_back("results " + join(files, ", "));
  return facts.empty() ? "" : join(facts, " · ") + "\n\n";
}

std::string section_md(const Section& s) {
  const Summary& sum = s.summary;
  std::string out = "## " + esc(s.experiment) + (s.description.empty() ? "" : " — " + esc(s.description)) + "\n\n";
  out += facts_md(s);
  if (!s.machines.empty()) out += "**Machine" + std::string(s.multi_host() ? "s" : "") + "**\n\n" + markdown_table(s.machines_table) + "\n";
  if (!s.builds.empty()) {
    out += "**Builds**\n\n" + builds_md(s) + "\n";
    std::string flags;
    for (const auto& b : s.builds)
      if (!b.build_flags.empty()) flags += "- " + esc(b.label) + ": " + code(b.build_flags) + "\n";
    if (!flags.empty()) out += "<details><summary>configure flags</summary>\n\n" + flags + "\n</details>\n\n";
  }
  if (!sum.cases.empty())
    out += "### Results\n\nEach cell: median case time (host clock, the call alone), its interval (95 %; the range below 6 runs), n=runs, ! unstable, the case's result, ✓/✗ expectations.\n\n" + grid_md(s.grid) + "\n" + failures_markdown(s.failed_cells);
  if (s.compares_builds())
    out += "### vs " + esc(s.baseline_python) + "\n\nWall time / wall time of the " + esc(s.baseline_python) +
           " build on the same machine, same case, paired by repeat (Hodges-Lehmann, its interval).\n\n" + markdown_table(s.vs_baseline_table) + "\n";
  const MarkdownMarkup markup{};
  return out + render_views(s, markup) + render_findings(s, markup);
}

}  // namespace

std::string markdown_table(const Table& table) {
  std::vector<std::string> header;
  std::vector<Align> align;
  for (const auto& c : table.columns) {
    header.push_back(esc(c.title));
    align.push_back(c.align);
  }
  std::string out = row(header) + rule(align);
  for (const auto& r : table.rows) {
    std::vector<std::string> cells;
    for (const auto& cell : r) cells.push_back(esc(cell));
    out += row(cells);
  }
  return out;
}

std::string render_markdown(const ReportModel& model) {
  std::string out = "# gilhost report\n\n";
  std::vector<std::string> files;
  for (const auto& f : model.files) files.push_back(code(f));
  out += fmt::format("{} experiment{}, {} measured runs, from {}.\n\n", model.sections.size(), model.sections.size() == 1 ? "" : "s",
                     model.measured_runs(), join(files, ", "));
  if (!model.relabeled.empty()) out += "Labels tagged with their machine: " + esc(join(model.relabeled, ", ")) + ".\n\n";
  if (model.malformed_lines) out += fmt::format("{} malformed lines skipped.\n\n", model.malformed_lines);
  if (model.sections.size() > 1) {
    out += "| experiment | cases | builds | expectations |\n|---|---:|---:|---|\n";
    for (const auto& s : model.sections)
      out += row({esc(s.experiment), std::to_string(s.summary.cases.size()), std::to_string(s.summary.interpreters.size()),
                  s.summary.expectation_failures ? fmt::format("✗ {} cells", s.summary.expectation_failures) : "✓"});
    out += "\n";
  }
  for (const auto& s : model.sections) out += section_md(s);
  return out;
}

}  // namespace gilhost
