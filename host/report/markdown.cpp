#include "report/markdown.hpp"

#include <fmt/format.h>

#include "util/strings.hpp"

namespace gilhost {

std::string markdown_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '*': out += "\\*"; break;
      case '`': out += "\\`"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': out += "<br>"; break;
      case '\r': break;
      default: out += ch;
    }
  }
  return out;
}

std::string grid_cell_text(const Cell& cell) {
  if (cell.runs.empty()) return "(warm-up only)";
  std::string text = format_wall(cell.wall_s) + " · " + cell.result_text + " " + verdict_mark(cell);
  if (cell.statuses != "ok" && cell.result_text != cell.statuses) text += " [" + cell.statuses + "]";
  return text;
}

std::string params_text(const nlohmann::json& params) {
  if (!params.is_object() || params.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [k, v] : params.items()) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  return join(parts, ", ");
}

namespace {

using E = std::string (*)(const std::string&);
const E esc = markdown_escape;

// A path as inline code in a table cell: pipes escaped (GFM strips the backslash), no backticks inside.
std::string code(const std::string& s) {
  if (s.empty()) return "-";
  if (s.find('`') != std::string::npos || s.find('\n') != std::string::npos) return esc(s);
  std::string out = "`";
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out + "`";
}

std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += " " + c + " |";
  return out + "\n";
}

std::string rule(const std::vector<bool>& right) {
  std::string out = "|";
  for (bool r : right) out += r ? "---:|" : "---|";
  return out + "\n";
}

std::string column_heading(const Section& s, const std::string& label) {
  const BuildInfo* b = s.build(label);
  std::string h = label;
  const Cell* any = nullptr;
  for (const auto& [k, c] : s.summary.cells)
    if (k.second == label) any = &c;
  if ((b && b->mode == "exec") || (any && any->mode == "exec")) h += " (exec)";
  return h;
}

std::string machines_md(const Section& s) {
  std::string out = row({"host", "CPU", "cores", "kernel", "arch", "memory"}) + rule({false, false, true, false, false, true});
  for (const auto& m : s.machines) {
    std::string cores = std::to_string(m.value("cores", 0));
    if (m.value("online_cpus", 0) && m.value("online_cpus", 0) != m.value("cores", 0))
      cores += fmt::format(" (of {} online)", m.value("online_cpus", 0));
    out += row({esc(m.value("hostname", "")), esc(m.value("cpu_model", "unknown")), cores, esc(m.value("kernel", "")),
                esc(m.value("arch", "")), m.value("memory_bytes", 0.0) > 0 ? format_bytes(m.value("memory_bytes", 0.0)) : "-"});
  }
  return out;
}

std::string builds_md(const Section& s) {
  std::string out = row({"build", "version", "free-threaded", "mode", "compiler", "found via", "host", "executable"}) +
                    rule({false, false, false, false, false, false, false, false});
  for (const auto& b : s.builds)
    out += row({esc(b.label), esc(b.version), b.free_threaded ? "yes" : "no", esc(b.mode), esc(b.compiler.empty() ? "-" : b.compiler),
                esc(b.source.empty() ? "-" : b.source), esc(b.host), code(b.executable)});
  return out;
}

std::string section_md(const Section& s, const ReportModel& model) {
  const Summary& sum = s.summary;
  const nlohmann::json& ex = s.experiment_meta;
  std::string out = "## " + esc(s.experiment) + (s.context.description.empty() ? "" : " — " + esc(s.context.description)) + "\n\n";
  std::vector<std::string> facts;
  if (!s.profile().empty()) facts.push_back("profile `" + s.profile() + "`");
  if (ex.contains("repeat"))
    facts.push_back(fmt::format("{} measured run{} per cell, {} warm-up", ex.value("repeat", 0), ex.value("repeat", 0) == 1 ? "" : "s",
                                ex.value("warmup", 0)));
  const std::string params = params_text(ex.value("params", nlohmann::json::object()));
  if (!params.empty()) facts.push_back("params " + esc(params));
  std::vector<std::string> files;
  for (const auto& f : s.sources) files.push_back(code(f));
  if (!files.empty()) facts.push_back("results " + join(files, ", "));
  if (!facts.empty()) out += join(facts, " · ") + "\n\n";

  if (!s.machines.empty()) out += "**Machine" + std::string(s.machines.size() > 1 ? "s" : "") + "**\n\n" + machines_md(s) + "\n";
  if (!s.builds.empty()) {
    out += "**Builds**\n\n" + builds_md(s) + "\n";
    std::string flags;
    for (const auto& b : s.builds)
      if (!b.build_flags.empty()) flags += "- " + esc(b.label) + ": " + code(b.build_flags) + "\n";
    if (!flags.empty()) out += "<details><summary>configure flags</summary>\n\n" + flags + "\n</details>\n\n";
  }

  if (!sum.cases.empty()) {
    out += "### Results\n\nEach cell: median wall time of the case ± MAD, the case's result, ✓/✗ expectations.\n\n";
    std::vector<std::string> header{"case"};
    std::vector<bool> right{false};
    for (const auto& i : sum.interpreters) {
      header.push_back(esc(column_heading(s, i)));
      right.push_back(false);
    }
    out += row(header) + rule(right);
    for (const auto& c : sum.cases) {
      std::vector<std::string> r{esc(c)};
      for (const auto& i : sum.interpreters) {
        const Cell* cell = sum.cell(c, i);
        r.push_back(cell ? esc(grid_cell_text(*cell)) : "skipped");
      }
      out += row(r);
    }
    out += "\n";
  }

  const bool vs = !s.baseline_python.empty() && !s.baseline_of.empty();
  if (vs) {
    out += "### vs " + esc(s.baseline_python) + "\n\nWall time / wall time of the " + esc(s.baseline_python) +
           " build on the same machine, same case, paired by repeat (median ± MAD).\n\n";
    std::vector<std::string> header{"case"};
    std::vector<bool> right{false};
    for (const auto& i : sum.interpreters) {
      header.push_back(esc(i));
      right.push_back(true);
    }
    out += row(header) + rule(right);
    for (const auto& c : sum.cases) {
      std::vector<std::string> r{esc(c)};
      for (const auto& i : sum.interpreters) r.push_back(sum.cell(c, i) ? vs_baseline_text(s, c, i) : "skipped");
      out += row(r);
    }
    out += "\n";
  }

  if (s.context.details && !sum.cells.empty()) {
    out += "### Details\n\n";
    std::vector<std::string> header{"case", "build", "runs", "wall median", "min–max", "cpu/wall", "init", "ratio"};
    std::vector<bool> right{false, false, true, true, true, true, true, true};
    if (vs) {
      header.push_back("vs " + esc(s.baseline_python));
      right.push_back(true);
    }
    for (const char* h : {"peak RSS", "maxrss", "threads", "procs", "gil", "status"}) {
      header.push_back(h);
      right.push_back(std::string(h) != "gil" && std::string(h) != "status");
    }
    out += row(header) + rule(right);
    for (const auto& c : sum.cases)
      for (const auto& i : sum.interpreters) {
        const Cell* cell = sum.cell(c, i);
        if (!cell || cell->runs.empty()) continue;
        const auto timing = timing_texts(*cell);
        std::vector<std::string> r{esc(c), esc(i), std::to_string(cell->runs.size()), timing[0], timing[1], timing[2],
                                   format_seconds(cell->init_s.median),
                                   cell->ratio ? fmt::format("{:.2f}x", cell->ratio->median) : "-"};
        if (vs) r.push_back(vs_baseline_text(s, c, i));
        for (const auto& x : {format_bytes(cell->peak_tree_rss_bytes), format_bytes(cell->max_rss_bytes), std::to_string(cell->peak_threads),
                              std::to_string(cell->peak_processes), gil_text(*cell), esc(cell->statuses)})
          r.push_back(x);
        out += row(r);
      }
    out += "\n";
    if (!sum.baseline.empty())
      out += "ratio: wall / wall of `" + sum.baseline + "` on the same build, paired by round (median).\n\n";
  }

  std::vector<std::string> failures;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters) {
      const Cell* cell = sum.cell(c, i);
      if (!cell) continue;
      for (const auto& f : cell->failures)
        failures.push_back(fmt::format("- ✗ **{}** @ {} ({} of {} runs): {}", esc(c), esc(i), cell->runs_failed_expectations,
                                       cell->runs.size(), esc(f)));
    }
  if (!failures.empty()) out += "### Expectations not met\n\n" + join(failures, "\n") + "\n\n";
  else if (!sum.cells.empty()) out += "Every expectation held.\n\n";

  const auto skips = group_skips(sum.skips);
  if (!skips.empty()) {
    out += "### Skipped\n\n";
    for (const auto& g : skips)
      out += "- " + (g.cases.empty() ? "" : esc(join(g.cases, ", ")) + " @ ") + esc(join(g.builds, ", ")) + ": " + esc(g.reason) + "\n";
    out += "\n";
  }
  if (s.context.article.is_object() && !s.context.article.empty()) {
    out += "### The article reported\n\n" + row({"case", "the article"}) + rule({false, false});
    for (const auto& [k, v] : s.context.article.items())
      out += row({esc(k), esc(v.is_string() ? v.get<std::string>() : v.dump())});
    out += "\n";
  }
  for (const auto& n : s.notes) out += "> " + esc(n) + "\n\n";
  (void)model;
  return out;
}

}  // namespace

std::string render_markdown(const ReportModel& model) {
  std::string out = "# gilhost report\n\n";
  int runs = 0;
  for (const auto& s : model.sections)
    for (const auto& [k, c] : s.summary.cells) runs += static_cast<int>(c.runs.size());
  std::vector<std::string> files;
  for (const auto& f : model.files) files.push_back(code(f));
  out += fmt::format("{} experiment{}, {} measured runs, from {}.\n\n", model.sections.size(), model.sections.size() == 1 ? "" : "s",
                     runs, join(files, ", "));
  if (!model.relabeled.empty()) out += "Labels tagged with their machine: " + esc(join(model.relabeled, ", ")) + ".\n\n";
  if (model.malformed_lines) out += fmt::format("{} malformed lines skipped.\n\n", model.malformed_lines);
  if (model.sections.size() > 1) {
    out += "| experiment | cases | builds | expectations |\n|---|---:|---:|---|\n";
    for (const auto& s : model.sections)
      out += row({esc(s.experiment), std::to_string(s.summary.cases.size()),
                  std::to_string(s.summary.interpreters.size()),
                  s.summary.expectation_failures ? fmt::format("✗ {} cells", s.summary.expectation_failures) : "✓"});
    out += "\n";
  }
  for (const auto& s : model.sections) out += section_md(s, model);
  return out;
}

}  // namespace gilhost
