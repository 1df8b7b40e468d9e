#include "report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>

#include "report/charts.hpp"
#include "report/colors.hpp"
#include "report/markup.hpp"
#include "report/text_grid.hpp"
#include "report/thread_lanes.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::string html_escape(const std::string& s) {
  // Control characters shown escaped: the page (or `cat` of it) never carries an escape sequence.
  return replace_characters(escape_controls(s), {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}});
}

std::string svg_number(double v) { return fmt::format("{:.1f}", v); }

std::vector<double> nice_ticks(double max, int target) {
  std::vector<double> ticks;
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  const double raw = max / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (int k = 0;; ++k) {
    ticks.push_back(k * step);
    if (k * step >= max * (1 - 1e-9)) break;
  }
  return ticks;
}

namespace {

// Axis labels: one unit for the whole axis.
struct Unit {
  double scale;
  const char* name;
};
Unit time_unit(double max_s) { return max_s >= 1 ? Unit{1, "s"} : max_s >= 1e-3 ? Unit{1e3, "ms"} : Unit{1e6, "µs"}; }
Unit bytes_unit(double max_b) { return max_b >= 1e9 ? Unit{1e-9, "GB"} : max_b >= 1e6 ? Unit{1e-6, "MB"} : Unit{1e-3, "kB"}; }
std::string tick_label(double v, const Unit& u) { return fmt::format("{:g} {}", v * u.scale, u.name); }

const char* kCss = R"CSS(
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#ffffff; --head:#f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; padding: 24px 32px 48px; max-width: 1600px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 6px; padding-top: 12px; border-top: 2px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 8px; }
p.facts, p.note, .muted { color: var(--muted); }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.grid td { font-variant-numeric: tabular-nums; }
table.grid span.nw, table.grid td.case { white-space: nowrap; }
table.grid td.case, table.details td.case { font-weight: 600; }
td.fail { background: #ffebe9; }
td.err { background: #fff8c5; }
td.skip { color: var(--muted); background: #f6f8fa; font-style: italic; }
span.ok { color: #1a7f37; font-weight: 700; }
span.bad { color: #cf222e; font-weight: 700; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px 4px; background: #fff; }
figcaption { font-weight: 600; margin-bottom: 2px; }
svg text { font: 11px system-ui, "DejaVu Sans", sans-serif; fill: #1f2328; }
svg .axis { stroke: #8c959f; stroke-width: 1; }
svg .gridline { stroke: #eaeef2; stroke-width: 1; }
svg .whisker { stroke: #1f2328; stroke-width: 1.4; }
svg text.value { fill: #424a53; }
svg text.skipped { fill: #8c959f; font-style: italic; }
ul.failures li, ul.skips li { margin: 2px 0; }
code.flags { display: block; max-width: 520px; white-space: pre-wrap; word-break: break-all; }
summary { cursor: pointer; color: var(--muted); }
svg text.group { font-weight: 600; }
svg text.marker { fill: #cf222e; }
svg .article, svg .cores, svg .ncores { stroke: #cf222e; stroke-width: 1.4; }
svg .one { stroke: #57606a; stroke-width: 1.2; }
figure.view, figure.scaling { margin-bottom: 8px; }
figure.view div.legend { font-size: 12px; max-width: 560px; margin: 2px 0 4px; }
div.threads { margin: 8px 0 4px; }
details.lanes { margin: 6px 0; }
figure.lanes { margin: 6px 0; }
figure.lanes, figure.threadshares { width: fit-content; }
svg text.lane-label.other { fill: #8c959f; font-style: italic; }
svg text.more { fill: #656d76; font-style: italic; }
ul.readings li { margin: 2px 0; }
details.more { margin: 10px 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
details.more > summary { font-size: 15px; font-weight: 600; color: var(--fg); }
div.summary h3:first-child { margin-top: 8px; }
table { max-width: 100%; }
td { overflow-wrap: anywhere; }
table.builds, table.machines, table.details { font-size: 12px; }
table.builds code { word-break: break-all; }
)CSS";

std::string table_html(const Table& table, const std::string& cls) {
  std::string out = "<div class=\"scroll\"><table class=\"" + cls + "\"><thead><tr>";
  for (const auto& c : table.columns) out += "<th>" + html_escape(c.title) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& r : table.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < r.size(); ++i)
      out += std::string(table.columns[i].align == Align::right ? "<td class=\"num\">" : "<td>") + html_escape(r[i]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string builds_html(const Section& s) {
  std::string out = "<div class=\"scroll\"><table class=\"builds\"><thead><tr>";
  for (const char* x : {"", "build", "version", "free-threaded", "mode", "compiler", "found via", "host", "executable", "libpython",
                        "configure flags"})
    out += std::string("<th>") + x + "</th>";
  out += "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < s.builds.size(); ++i) {
    const BuildInfo& b = s.builds[i];
    out += "<tr><td><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" rx=\"2\" fill=\"" + build_color(b.label) +
           "\"/></svg></td><td>" + html_escape(b.label) + "</td><td>" + html_escape(b.version) + "</td><td>" + (b.free_threaded ? "yes" : "no") +
           "</td><td>" + html_escape(b.mode) + "</td><td>" + html_escape(b.compiler.empty() ? "-" : b.compiler) + "</td><td>" +
           html_escape(b.source.empty() ? "-" : b.source) + "</td><td>" + html_escape(b.host) + "</td><td><code>" + html_escape(b.executable) +
           "</code></td><td><code>" + html_escape(b.libpython.empty() ? "-" : b.libpython) + "</code></td><td>" +
           (b.build_flags.empty() ? std::string("-")
                                  : "<details><summary>" + std::to_string(b.build_flags.size()) + " chars</summary><code class=\"flags\">" +
                                        html_escape(b.build_flags) + "</code></details>") +
           "</td></tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

// One grid cell's <td>: the wall and the result, the marks, the vs baseline figure beneath.
std::string grid_cell_html(const Section& s, std::size_t c, std::size_t k) {
  const Grid& grid = s.grid;
  const GridCell& cell = grid.cells[c][k];
  if (cell.state == GridCell::State::skipped) return "<td class=\"skip\">skipped</td>";
  const bool measured = cell.state == GridCell::State::measured;
  const std::string cls = !cell.expectations_ok ? "fail" : cell.statuses != "ok" ? "err" : "";
  std::string out = "<td" + (cls.empty() ? "" : " class=\"" + cls + "\"") + " title=\"" +
                    html_escape(grid.cases[c] + " @ " + grid.columns[k].label + ": " + cell.statuses) + "\">" +
                    // The time and the result each whole; the line may break between them where the page is narrow.
                    (measured ? "<span class=\"nw\">" + html_escape(cell.wall) + " ·</span> <span class=\"nw\">" + html_escape(cell.result) + "</span>"
                              : "(warm-up only)") +
                    (cell.mark.empty() ? "" : " <span class=\"" + std::string(cell.expectations_ok ? "ok" : "bad") + "\">" + cell.mark + "</span>");
  if (measured && cell.show_statuses) out += fmt::format(" [{}]", html_escape(cell.statuses));
  if (!cell.vs_baseline.empty()) out += "<br><span class=\"muted\">vs " + html_escape(s.baseline_python) + ": " + html_escape(cell.vs_baseline) + "</span>";
  return out + "</td>";
}

std::string build_heading_html(const GridColumn& col) {
  return html_escape(col.heading) + (col.baseline ? " <span class=\"muted\">(baseline)</span>" : "");
}

// About how narrow the grid can render with builds across, its time and result on two lines (px: 7.5 a
// character of 14 px system-ui, as chromium draws the demo report's grid; 18 of padding and border a
// cell), to tell whether it fits the page.
double grid_width_px(const Grid& grid) {
  auto px = [](std::size_t chars) { return 7.5 * static_cast<double>(chars) + 18; };
  std::size_t case_chars = 4;
  for (const auto& c : grid.cases) case_chars = std::max(case_chars, display_width(c));
  double total = px(case_chars);
  for (std::size_t k = 0; k < grid.columns.size(); ++k) {
    std::size_t chars = display_width(grid.columns[k].heading) + 11;
    for (const auto& row : grid.cells)
      chars = std::max({chars, display_width(row[k].wall) + 2, display_width(row[k].result) + 4 + display_width(row[k].statuses),
                        display_width(row[k].vs_baseline) + 9});
    total += px(chars);
  }
  return total;
}

// Builds across, cases down; where that is wider than the page (kPageTable px), one row per case and build.
std::string grid_html(const Section& s) {
  constexpr double kPageTable = 1330;  // 1400 px of window less the body's padding
  const Grid& grid = s.grid;
  const bool across = grid_width_px(grid) <= kPageTable;
  std::string out = "<div class=\"scroll\"><table class=\"grid\"><thead><tr><th>case</th>";
  if (across)
    for (const auto& col : grid.columns) out += "<th>" + build_heading_html(col) + "</th>";
  else
    out += "<th>build</th><th>median case time · result</th>";
  out += "</tr></thead><tbody>\n";
  for (std::size_t c = 0; c < grid.cases.size(); ++c) {
    if (across) {
      out += "<tr><td class=\"case\">" + html_escape(grid.cases[c]) + "</td>";
      for (std::size_t k = 0; k < grid.columns.size(); ++k) out += grid_cell_html(s, c, k);
      out += "</tr>\n";
      continue;
    }
    for (std::size_t k = 0; k < grid.columns.size(); ++k)
      out += "<tr>" + (k == 0 ? fmt::format("<td class=\"case\" rowspan=\"{}\">", grid.columns.size()) + html_escape(grid.cases[c]) + "</td>" : "") +
             "<td>" + build_heading_html(grid.columns[k]) + "</td>" + grid_cell_html(s, c, k) + "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

// Horizontal bars: the median wall time of each build, whiskers from the fastest to the slowest run.
std::string bar_chart(const Section& s, const std::string& case_name) {
  const Summary& sum = s.summary;
  const int width = 600, left = 150, right = 84, top = 8, row_h = 24, axis_h = 30;
  const int n = static_cast<int>(sum.interpreters.size());
  const int height = top + n * row_h + axis_h;
  double max = 0;
  for (const auto& i : sum.interpreters)
    if (const Cell* c = sum.cell(case_name, i); c && c->wall_s.n) max = std::max(max, c->wall_s.max);
  const auto ticks = nice_ticks(max);
  const double axis_max = ticks.back() > 0 ? ticks.back() : 1;
  const Unit u = time_unit(axis_max);
  const double plot_w = width - left - right;
  auto x = [&](double v) { return left + plot_w * v / axis_max; };

  std::string out = fmt::format("<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
                                width, height, width, height, html_escape("wall time of " + case_name + " per build"));
  const int plot_bottom = top + n * row_h;
  for (double t : ticks) {
    out += fmt::format("<line class=\"gridline\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(x(t)), top, plot_bottom);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", svg_number(x(t)), plot_bottom + 16, html_escape(tick_label(t, u)));
  }
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", left, top, plot_bottom);
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", left, plot_bottom, svg_number(x(axis_max)));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"value\">wall time</text>\n", width - 4, height - 2);
  for (int k = 0; k < n; ++k) {
    const std::string& label = sum.interpreters[k];
    const double cy = top + k * row_h + row_h / 2.0;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>", left - 6, svg_number(cy), svg_label(label, 24));
    const Cell* c = sum.cell(case_name, label);
    if (!c || c->wall_s.n == 0) {
      out += fmt::format("<text class=\"skipped\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n", left + 6, svg_number(cy),
                         !c ? "skipped" : "no timed run (" + html_escape(c->statuses) + ")");
      continue;
    }
    const Stats& w = c->wall_s;
    const std::string tip = fmt::format("{} @ {}: median {}, min–max {}–{}, {} run{}", case_name, label, format_seconds(w.median),
                                        format_seconds(w.min), format_seconds(w.max), w.n, w.n == 1 ? "" : "s");
    out += fmt::format("<g class=\"build\" data-build=\"{}\"><title>{}</title>", html_escape(label), html_escape(tip));
    out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" rx=\"2\" fill=\"{}\" data-median-s=\"{}\"/>", left,
                       svg_number(cy - 7), svg_number(std::max(1.0, x(w.median) - left)), build_color(label), fmt::format("{:.6g}", w.median));
    if (w.n > 1) {
      out += fmt::format("<line class=\"whisker\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>", svg_number(x(w.min)), svg_number(x(w.max)), svg_number(cy));
      for (double v : {w.min, w.max})
        out += fmt::format("<line class=\"whisker\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(x(v)), svg_number(cy - 5), svg_number(cy + 5));
    }
    out += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>\n", svg_number(x(w.max) + 6), svg_number(cy),
                       html_escape(format_seconds(w.median)));
  }
  return out + "</svg>\n";
}

// Tree RSS over time of the median run of each build.
std::string rss_chart(const Section& s, const std::string& case_name) {
  const Summary& sum = s.summary;
  struct Line {
    std::size_t build;
    std::vector<std::pair<double, double>> points;  // seconds, bytes
    std::string tip;
  };
  std::vector<Line> lines;
  double max_t = 0, max_b = 0;
  for (std::size_t k = 0; k < sum.interpreters.size(); ++k) {
    const RunRecord* run = s.median_run(case_name, sum.interpreters[k]);
    if (!run || !run->rss) continue;
    Line l{k, {}, ""};
    int peak_threads = 0, peak_procs = 0;
    for (const auto& p : run->rss->timeline) {
      l.points.emplace_back(p.t_ms / 1e3, p.tree_rss_bytes);
      peak_threads = std::max(peak_threads, p.threads);
      peak_procs = std::max(peak_procs, p.processes);
    }
    if (l.points.empty()) continue;
    for (const auto& [t, b] : l.points) {
      max_t = std::max(max_t, t);
      max_b = std::max(max_b, b);
    }
    l.tip = fmt::format("{} @ {} (median run, repeat {}): peak {} RSS, {} threads, {} processes", case_name, sum.interpreters[k],
                        run->repeat, format_bytes(static_cast<double>(run->rss->peak_tree_rss_bytes)), peak_threads, peak_procs);
    lines.push_back(std::move(l));
  }
  if (lines.empty()) return "<p class=\"muted\">no RSS samples for " + html_escape(case_name) + "</p>\n";

  const int width = 600, left = 64, right = 30, top = 10, plot_h = 170, axis_h = 34, legend_row = 18, per_row = 4;
  const int legend_rows = static_cast<int>((lines.size() + per_row - 1) / per_row);
  const int height = top + plot_h + axis_h + legend_rows * legend_row + 6;
  const auto xt = nice_ticks(max_t), yt = nice_ticks(max_b, 4);
  const double xmax = xt.back() > 0 ? xt.back() : 1, ymax = yt.back() > 0 ? yt.back() : 1;
  const Unit tu = time_unit(xmax), bu = bytes_unit(ymax);
  const double plot_w = width - left - right;
  auto x = [&](double v) { return left + plot_w * v / xmax; };
  auto y = [&](double v) { return top + plot_h - plot_h * v / ymax; };
  std::string out = fmt::format("<svg class=\"rss\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
                                width, height, width, height, html_escape("process tree RSS over time, " + case_name));
  for (double t : yt) {
    out += fmt::format("<line class=\"gridline\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>", left, svg_number(x(xmax)), svg_number(y(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n", left - 5, svg_number(y(t)),
                       html_escape(tick_label(t, bu)));
  }
  for (double t : xt)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", svg_number(x(t)), top + plot_h + 15, html_escape(tick_label(t, tu)));
  out += fmt::format("\n<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", left, top, top + plot_h);
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", left, top + plot_h, svg_number(x(xmax)));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"value\">time since the run started</text>\n", width - right,
                     top + plot_h + 29);
  for (const auto& l : lines) {
    std::string pts;
    for (const auto& [t, b] : l.points) pts += svg_number(x(t)) + "," + svg_number(y(b)) + " ";
    if (l.points.size() == 1) pts += svg_number(x(l.points[0].first) + 2) + "," + svg_number(y(l.points[0].second));
    const BuildInfo* b = s.build(sum.interpreters[l.build]);
    out += fmt::format("<polyline class=\"rssline\" data-build=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{} points=\"{}\"><title>{}</title></polyline>\n",
                       html_escape(sum.interpreters[l.build]), build_color(sum.interpreters[l.build]), b && b->free_threaded ? " stroke-dasharray=\"5 3\"" : "", pts, html_escape(l.tip));
  }
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const int lx = left + static_cast<int>(k % per_row) * 132;
    const int ly = top + plot_h + axis_h + static_cast<int>(k / per_row) * legend_row + 8;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>", lx,
                       ly - 2, build_color(sum.interpreters[lines[k].build]), lx + 19, ly, svg_label(sum.interpreters[lines[k].build], 18));
  }
  return out + "\n</svg>\n";
}

class HtmlMarkup : public Markup {
 public:
  // charts=false: the tables only (the page drew the charts in its summary).
  explicit HtmlMarkup(bool charts = true) : charts_(charts) {}
  std::string escape(const std::string& text) const override { return html_escape(text); }
  std::string heading(const std::string& text) const override { return "<h3>" + html_escape(text) + "</h3>\n"; }
  std::string table(const Table& t, const std::string& css_class) const override { return table_html(t, css_class); }
  std::string paragraph(const std::string& markup, const std::string& css_class) const override {
    return "<p" + (css_class.empty() ? "" : " class=\"" + css_class + "\"") + ">" + markup + "</p>\n";
  }
  std::string note(const std::string& text) const override { return paragraph(html_escape(text), "note"); }
  std::string list(const std::vector<std::string>& items, const std::string& css_class) const override {
    std::string out = "<ul class=\"" + css_class + "\">\n";
    for (const auto& item : items) out += "<li>" + item + "</li>\n";
    return out + "</ul>\n";
  }
  std::string strong(const std::string& markup) const override { return "<b>" + markup + "</b>"; }
  std::string quote(const std::string& text) const override { return "'" + html_escape(text) + "'"; }
  std::string verdict(bool ok) const override { return ok ? "<span class=\"ok\">✓</span>" : "<span class=\"bad\">✗</span>"; }
  std::string all_held_mark() const override { return verdict(true) + " "; }
  std::string headline_chart(const Section& s, const Headline& h) const override { return charts_ ? headline_svg(s, h) : ""; }
  std::string scaling_chart(const Section& s, const Scaling& sc) const override {
    if (!charts_) return "";
    return "<figure class=\"scaling\"><figcaption>" + html_escape(sc.title()) + "</figcaption>\n" + scaling_svg(s, sc) + "</figure>\n";
  }

 private:
  bool charts_;
};

std::string facts_html(const Section& s) {
  std::vector<std::string> facts;
  if (!s.profile().empty()) facts.push_back("profile " + s.profile());
  if (!s.runs_per_cell.empty()) facts.push_back(s.runs_per_cell);
  if (!s.params.empty()) facts.push_back("params " + s.params);
  if (!s.sources.empty()) facts.push_back("results " + join(s.sources, ", "));
  return facts.empty() ? "" : "<p class=\"facts\">" + html_escape(join(facts, " · ")) + "</p>\n";
}

// A part below the summary, closed until asked for ("" when it has nothing).
std::string folded(const std::string& title, const std::string& body, const std::string& cls) {
  if (body.empty()) return "";
  return "<details class=\"more " + cls + "\"><summary>" + html_escape(title) + "</summary>\n" + body + "</details>\n";
}

// The readings that say what dominated (the GIL, a lock, I/O, parallel), one line per kind with its first
// cells named, and beside each kind a chart of those cells' shares; every reading one by one folded below,
// and "waited for a core" (the machine had fewer cores than runnable threads) folded too: the machine's story.
std::string readings_html(const Section& s) {
  if (s.readings.empty()) return "";
  constexpr std::size_t kCellsShown = 4;
  std::vector<Reading> key, core;
  for (const auto& r : s.readings) (r.rule == ReadingRule::waited_for_core ? core : key).push_back(r);
  const HtmlMarkup m{};
  const auto items = [](const std::vector<Reading>& list) {
    std::vector<std::string> out;
    for (const auto& r : list) out.push_back("<b>" + html_escape(r.case_name) + "</b> @ " + html_escape(r.build) + ": " + html_escape(r.text));
    return out;
  };
  std::vector<std::string> grouped;
  for (const auto& line : group_readings(key, kCellsShown)) grouped.push_back(html_escape(line));
  std::string out = "<h3>Readings</h3>\n<p class=\"muted\">What the thread states say: the median share of the Python threads' time "
                    "in each state, over the cell's runs.</p>\n";
  if (!grouped.empty()) out += m.list(grouped, "readings");
  if (key.size() > grouped.size())
    out += "<details class=\"all-readings\"><summary>each of the " + std::to_string(key.size()) + " readings</summary>\n" +
           m.list(items(key), "readings") + "</details>\n";
  if (!core.empty())
    out += "<details class=\"core-readings\"><summary>" + std::to_string(core.size()) + " cell" + (core.size() == 1 ? "" : "s") +
           " where threads waited for a core (more runnable threads than cores)</summary>\n" + m.list(items(core), "readings") + "</details>\n";
  std::string charts;
  for (const auto& [rule, cells] : readings_by_rule(key)) {
    std::vector<SharesRow> rows;
    for (const Reading* r : cells)
      if (const Cell* cell = s.summary.cell(r->case_name, r->build); cell && cell->threads && rows.size() < kCellsShown)
        rows.push_back({r->case_name + " @ " + r->build, &*cell->threads});
    charts += "<figure class=\"threadshares\"><figcaption>" + html_escape(cells.front()->text) + "</figcaption>\n" +
              shares_svg(rows, std::string("where the Python threads' time went: ") + reading_rule_name(rule)) + "</figure>\n";
  }
  return charts.empty() ? out : out + "<div class=\"charts\">\n" + charts + "</div>\n";
}

// The answer: the views and scaling as charts, the thread-state readings as stacked bars, the grid and the
// expectations; everything else folds below it.
std::string summary_html(const Section& s) {
  const HtmlMarkup markup{};
  std::string charts;
  for (const auto& h : s.headlines) charts += headline_svg(s, h);
  for (const auto& sc : s.scaling) charts += markup.scaling_chart(s, sc);
  std::string out = s.article_caveat.empty() ? "" : "<p class=\"note caveat\">" + html_escape(s.article_caveat) + "</p>\n";
  if (!charts.empty()) out += "<div class=\"charts answer\">\n" + charts + "</div>\n";
  out += readings_html(s);
  if (!s.summary.cases.empty())
    out += "<h3>Results</h3>\n<p class=\"muted\">Each cell: median case time (host clock, the call alone), its interval (95 %; the range below 6 runs), n=runs, ! unstable, the case's result, ✓/✗ expectations" +
           std::string(s.baseline_of.empty() ? "" : "; vs " + html_escape(s.baseline_python) + ": wall / wall of that build on the same machine, paired by repeat (Hodges-Lehmann, its interval)") +
           ".</p>\n" + grid_html(s) + failures_html(s.failed_cells);
  return "<div class=\"summary\">\n" + out + render_expectations(s, markup) + "</div>\n";
}

using Writer = std::function<void(std::string_view)>;

// One case's charts at a time: the thread lanes of its median runs are read again from the file where
// the model was read without timelines, so no more than one case's are in memory.
void write_case_charts(const Section& s, const Writer& put) {
  std::string out = "<p class=\"muted\">Bars: median wall time per build, whiskers from the fastest to the slowest run. Lines: RSS of "
                    "the whole process tree during the median run of each build (dashed: free-threaded)." +
                    std::string(s.has_thread_states() ? " Thread states: where the Python threads' time went, and (folded) each thread's "
                                                        "timeline in the median run with thread states." : "") + "</p>\n";
  put(out);
  for (const auto& c : s.summary.cases) {
    out = "<div class=\"case-charts\"><h3>" + html_escape(c) + "</h3><div class=\"charts\">\n";
    out += "<figure><figcaption>wall time</figcaption>\n" + bar_chart(s, c) + "</figure>\n";
    out += "<figure><figcaption>process tree RSS, median run</figcaption>\n" + rss_chart(s, c) + "</figure>\n";
    put(out + "</div>\n" + thread_charts_html(s, c) + "</div>\n");
  }
}

// One section, a part at a time.
void write_section(const Section& s, const Writer& put) {
  const HtmlMarkup tables{false};
  std::string out = "<section class=\"experiment\" id=\"" + html_escape("x-" + s.experiment) + "\">\n<h2>" + html_escape(s.experiment) +
                    (s.description.empty() ? "" : " — " + html_escape(s.description)) + "</h2>\n";
  out += facts_html(s) + summary_html(s);
  out += folded("The views' tables, how each is computed, the metrics", render_views(s, tables), "views-tables");
  out += folded("Details per cell", render_details(s, tables), "details");
  out += render_evidence(s, tables);  // not folded: what the figures cannot claim stays in view
  if (!s.summary.cases.empty()) {
    if (const std::string chart = parallelism_svg(s); !chart.empty())
      out += folded("Effective parallelism (CPU / wall per case)",
                    "<p class=\"muted\">CPU time / wall time of each case, median over its runs: about 1 means one core busy at a time "
                    "(what a GIL allows pure-Python threads), up to the machine's cores when the work runs in parallel.</p>\n"
                    "<figure class=\"parallelism\">" + chart + "</figure>\n", "parallelism");
    put(out + "<details class=\"more cases\"><summary>Wall time, memory and threads per case</summary>\n");
    write_case_charts(s, put);
    out = "</details>\n";
  }
  std::string where;
  if (!s.machines.empty()) where += "<h3>Machine" + std::string(s.multi_host() ? "s" : "") + "</h3>\n" + table_html(s.machines_table, "machines");
  if (!s.builds.empty()) where += "<h3>Builds</h3>\n" + builds_html(s);
  out += folded("Machines and builds", where, "where");
  out += folded("Skipped", render_skips(s, tables), "skips");
  const std::string article = render_article(s, tables);
  out += folded("What the article reported", article.empty() || s.article_caveat.empty() ? article : article + tables.note(s.article_caveat),
                "article");
  for (const auto& n : s.notes) out += tables.note(n);
  put(out + "</section>\n");
}

}  // namespace

std::string render_html(const ReportModel& model) {
  std::string out;
  write_html(model, [&](std::string_view text) { out += text; });
  return out;
}

void write_html(const ReportModel& model, const std::function<void(std::string_view)>& put) {
  std::vector<std::string> names;
  for (const auto& s : model.sections) names.push_back(s.experiment);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>gilhost report: " + html_escape(join(names, ", ")) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n";
  const int runs = model.measured_runs();
  out += "<h1>gilhost report</h1>\n<p class=\"facts\">" +
         html_escape(fmt::format("{} experiment{}, {} measured runs, from {}", model.sections.size(), model.sections.size() == 1 ? "" : "s", runs,
                       join(model.files, ", "))) + "</p>\n";
  if (!model.relabeled.empty()) out += "<p class=\"note\">Labels tagged with their machine: " + html_escape(join(model.relabeled, ", ")) + "</p>\n";
  if (model.malformed_lines) out += "<p class=\"note\">" + std::to_string(model.malformed_lines) + " malformed lines skipped</p>\n";
  if (model.sections.size() > 1) {
    out += "<nav><ul>\n";
    for (const auto& s : model.sections)
      out += "<li><a href=\"#" + html_escape("x-" + s.experiment) + "\">" + html_escape(s.experiment) + "</a> — " +
             html_escape(fmt::format("{} cases x {} builds", s.summary.cases.size(), s.summary.interpreters.size())) +
             (s.summary.expectation_failures ? " <span class=\"bad\">✗</span>" : " <span class=\"ok\">✓</span>") + "</li>\n";
    out += "</ul></nav>\n";
  }
  put(out);
  for (const auto& s : model.sections) write_section(s, put);
  put("<p class=\"muted\">Made by gilhost from the results files above; no scripts, no external resources.</p>\n</body>\n</html>\n");
}

}  // namespace gilhost
