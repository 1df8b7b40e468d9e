#include "report/charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "report/colors.hpp"
#include "report/html.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::string svg_open(const std::string& css, int width, int height, const std::string& label) {
  return fmt::format("<svg class=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n",
                     css, width, height, width, height, html_escape(label));
}

namespace {

// One bar of a horizontal bar chart; a row with a group label starts a group (a case of the parallelism chart).
struct Bar {
  std::string group;  // "" = no group row before it
  std::string build;
  std::optional<double> value;
  std::string text, tip;
  // A ratio that claims no direction (its 95 % interval holds 1, or it has none): drawn as an outline.
  bool claims = true;
  // Its spread, drawn as a whisker; a value without one (a single run) does not set the axis, and past it
  // stops at the plot's edge with a "»".
  std::optional<std::pair<double, double>> interval;
  bool spread_known = true;
};
// A vertical line across the bars: the article's figure, one core, the machine's cores.
struct Marker {
  double value;
  std::string label, css;
};

// One bar, its whisker and its text: filled where it claims a value, an outline where it does not.
template <typename X>
std::string bar_svg(const Bar& b, const std::string& bar_css, X&& x, double cy, double axis_max) {
  const double left = x(0.0), end = x(*b.value);
  const std::string colour = build_color(b.build);
  const std::string paint = b.claims ? "fill=\"" + colour + "\"" : "fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"";
  std::string out = fmt::format("<g data-build=\"{}\"><title>{}</title><rect class=\"{}{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" rx=\"2\" {}/>",
                                html_escape(b.build), html_escape(b.tip), bar_css, b.claims ? "" : " noclaim", svg_number(left), svg_number(cy - 6),
                                svg_number(std::max(1.0, end - left)), paint);
  double text_x = end;
  if (b.interval) {
    // A whisker that runs past the axis has no cap there: it goes on.
    const double lo = x(b.interval->first), hi = x(b.interval->second);
    const std::string cap = b.interval->second > axis_max ? "" : fmt::format("M{} {}V{}", svg_number(hi), svg_number(cy - 4), svg_number(cy + 4));
    out += fmt::format("<path class=\"whisker\" d=\"M{0} {1}V{2}M{0} {3}H{4}{5}\"/>", svg_number(lo), svg_number(cy - 4), svg_number(cy + 4),
                       svg_number(cy), svg_number(hi), cap);
    text_x = std::max(text_x, hi);
  }
  const std::string text = (*b.value > axis_max ? "» " : "") + b.text;
  return out + fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>\n", svg_number(text_x + 6),
                           svg_number(cy), html_escape(text));
}

// The axis: every marker and every value whose spread is known (all values where none is).
double axis_top(const std::vector<Bar>& bars, const std::vector<Marker>& markers) {
  const bool any_known = std::any_of(bars.begin(), bars.end(), [](const Bar& b) { return b.value && b.spread_known; });
  double max = 0;
  for (const auto& b : bars)
    if (b.value && (b.spread_known || !any_known)) max = std::max(max, *b.value);
  for (const auto& m : markers) max = std::max(max, m.value);
  return max;
}

std::vector<double> axis_ticks(const std::vector<Bar>& bars, const std::vector<Marker>& markers) {
  return nice_ticks(axis_top(bars, markers));
}

double axis_end(const std::vector<double>& ticks) { return ticks.back() > 0 ? ticks.back() : 1; }

std::string hbar_svg(const std::string& css, const std::string& bar_css, const std::string& aria,
                     const std::vector<Bar>& bars, const std::vector<Marker>& markers, const std::string& axis) {
  const int left = 150, plot_width = 366, top = 18, row_h = 20, group_h = 18, axis_h = 30;
  // Room for the longest value's text (about 6.2 px a character at 11 px) right of the plot, up to 40
  // characters: a longer one runs past the drawing's edge (its bar's tooltip holds it whole).
  std::size_t longest = 0;
  for (const auto& b : bars) longest = std::max(longest, std::min<std::size_t>(b.text.size() + 2, 40));
  const int right = std::max(84, 16 + static_cast<int>(6.2 * static_cast<double>(longest)));
  const int width = left + plot_width + right;
  int rows_h = 0;
  for (const auto& b : bars) rows_h += row_h + (b.group.empty() ? 0 : group_h);
  const int height = top + rows_h + axis_h;
  const auto ticks = axis_ticks(bars, markers);
  const double axis_max = axis_end(ticks);
  const double plot_w = plot_width;
  // The share of the axis first: a script's value may be near the largest double, times the width infinite.
  auto x = [&](double v) { return left + plot_w * (std::clamp(v, 0.0, axis_max) / axis_max); };
  const int bottom = top + rows_h;
  std::string out = svg_open(css, width, height, aria);
  for (double t : ticks) {
    out += fmt::format("<line class=\"gridline\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(x(t)), top, bottom);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", svg_number(x(t)), bottom + 16, t);
  }
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", left, top, bottom);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"value\">{}</text>\n", width - 4, height - 2, html_escape(axis));
  int y = top;
  for (const auto& b : bars) {
    if (!b.group.empty()) {
      out += fmt::format("<text class=\"group\" x=\"4\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n", y + group_h / 2,
                         svg_label(b.group, 40));
      y += group_h;
    }
    const double cy = y + row_h / 2.0;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>", left - 6, svg_number(cy),
                       svg_label(b.build, 24));
    if (!b.value) {
      out += fmt::format("<text class=\"skipped\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">-</text>\n", left + 6, svg_number(cy));
    } else {
      out += bar_svg(b, bar_css, x, cy, axis_max);
    }
    y += row_h;
  }
  for (const auto& m : markers) {
    out += fmt::format("<line class=\"{0}\" x1=\"{1}\" y1=\"{2}\" x2=\"{1}\" y2=\"{3}\" stroke-dasharray=\"4 3\"/>", m.css, svg_number(x(m.value)), top - 4,
                       bottom);
    out += fmt::format("<text class=\"marker\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", svg_number(x(m.value)), top - 7, html_escape(m.label));
  }
  return out + "</svg>\n";
}

}  // namespace

std::string chart_label(const std::string& label, std::size_t max) {
  return label.size() > max ? shortened(label, max - 1) : label;
}

std::string svg_label(const std::string& label, std::size_t max) {
  const std::string shown = chart_label(label, max);
  return html_escape(shown) + (shown == label ? "" : "<title>" + html_escape(label) + "</title>");
}

std::string headline_svg(const Section& s, const Headline& h) {
  std::vector<Bar> bars;
  for (const auto& v : h.values) {
    Bar bar{"", v.build, v.value, v.text, h.spec.title + " @ " + v.build + ": " + v.text, true, std::nullopt, true};
    // A ratio of one run, or one whose interval holds 1, says no direction: it must not look like one.
    bar.claims = v.supported;
    if (v.estimate && v.estimate->interval) bar.interval = {v.estimate->interval->lo, v.estimate->interval->hi};
    bar.spread_known = !v.estimate || v.estimate->interval.has_value();
    bars.push_back(std::move(bar));
  }
  std::vector<Marker> markers;
  if (h.spec.article) markers.push_back({*h.spec.article, "article " + h.article_text, "article"});
  // A run of other sizes: the marker would mislead; the caption says why there is none.
  const std::string caveat = h.article_text == "not comparable" ? "<div class=\"muted\">" + html_escape(s.article_caveat) + "</div>\n" : "";
  const bool outlined = std::any_of(bars.begin(), bars.end(), [](const Bar& b) { return b.value && !b.claims; });
  const double axis_max = axis_end(axis_ticks(bars, markers));
  const bool past_axis = std::any_of(bars.begin(), bars.end(), [&](const Bar& b) { return b.value && *b.value > axis_max; });
  std::string legend;
  if (outlined) legend += "Outlined: no direction claimed (its 95 % interval holds 1, or it has none). ";
  if (past_axis) legend += "A single run does not set the axis: » marks one past it.";
  if (!legend.empty()) legend = "<div class=\"muted legend\">" + html_escape(legend) + "</div>\n";
  return "<figure class=\"view\"><figcaption>" + html_escape(h.spec.title) + "</figcaption>\n" + caveat +
         hbar_svg("view", "viewbar", h.spec.title + " per build", bars, markers, h.unit.empty() ? h.spec.key : h.unit) + legend + "</figure>\n";
}

std::string parallelism_svg(const Section& s) {
  const Summary& sum = s.summary;
  std::vector<Bar> bars;
  for (const auto& c : sum.cases) {
    bool first = true;
    for (const auto& i : sum.interpreters) {
      const Cell* cell = sum.cell(c, i);
      if (!cell || cell->wall_s.n == 0) continue;
      const double v = cell->cpu_per_wall.median;
      bars.push_back({first ? c : "", i, v, fmt::format("{:.2f}", v), fmt::format("{} @ {}: CPU / wall {:.2f} (median)", c, i, v), true,
                      std::nullopt, true});
      first = false;
    }
  }
  if (bars.empty()) return "";
  std::vector<Marker> markers{{1, "1 core", "one"}};
  if (s.machine && s.machine->cores > 1) markers.push_back({static_cast<double>(s.machine->cores), fmt::format("{} cores", s.machine->cores), "ncores"});
  return hbar_svg("parallelism", "cpubar", "effective parallelism, CPU / wall, per case and build", bars, markers, "CPU / wall");
}

std::string scaling_svg(const Section& s, const Scaling& sc) {
  const int width = 600, left = 54, right = 150, top = 14, plot_h = 200, axis_h = 36;
  const int height = top + plot_h + axis_h;
  const bool log_x = sc.counts.front() > 0;  // 1, 2, 4, 8 evenly; a sweep from 0 linearly
  auto pos = [&](double n) { return log_x ? std::log2(n) : n; };
  const double x0 = pos(static_cast<double>(sc.counts.front())), x1 = pos(static_cast<double>(sc.counts.back()));
  const double plot_w = width - left - right;
  auto x = [&](double n) { return left + (x1 > x0 ? plot_w * (pos(n) - x0) / (x1 - x0) : plot_w / 2); };
  double max = 1;
  for (const auto& line : sc.lines)
    for (const auto& p : line.points) {
      max = std::max(max, p.ideal);
      if (p.speedup.valid()) max = std::max(max, p.speedup.value);
    }
  const auto ticks = nice_ticks(max, 4);
  const double ymax = ticks.back() > 0 ? ticks.back() : 1;
  auto y = [&](double v) { return top + plot_h - plot_h * v / ymax; };
  std::string out = svg_open("scaling", width, height, "speedup against " + sc.key + ", " + sc.title());
  for (double t : ticks) {
    out += fmt::format("<line class=\"gridline\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>", left, svg_number(left + plot_w), svg_number(y(t)));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{:g}x</text>\n", left - 5, svg_number(y(t)), t);
  }
  for (auto n : sc.counts)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", svg_number(x(static_cast<double>(n))), top + plot_h + 15, n);
  out += fmt::format("\n<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", left, top, top + plot_h);
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", left, top + plot_h, svg_number(left + plot_w));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"value\">{} (speedup over {}={})</text>\n", svg_number(left + plot_w),
                     top + plot_h + 31, html_escape(sc.key), html_escape(sc.key), sc.counts.front());
  // The ideal: linear up to the cores, flat after; the cores marked where they fall in the sweep.
  std::string ideal;
  for (const auto& p : sc.lines.front().points) ideal += svg_number(x(static_cast<double>(p.n))) + "," + svg_number(y(p.ideal)) + " ";
  out += "<polyline class=\"ideal\" fill=\"none\" stroke=\"#8c959f\" stroke-width=\"1.4\" stroke-dasharray=\"6 4\" points=\"" + ideal +
         "\"><title>ideal: speedup = min(N, cores)</title></polyline>\n";
  if (sc.cores > 0 && sc.cores >= sc.counts.front() && sc.cores <= sc.counts.back()) {
    const std::string cx = svg_number(x(sc.cores));
    out += fmt::format("<line class=\"cores\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#cf222e\" stroke-dasharray=\"3 3\"/>", cx, top,
                       top + plot_h);
    out += fmt::format("<text class=\"marker\" x=\"{}\" y=\"{}\" dominant-baseline=\"hanging\">{} cores</text>\n", svg_number(x(sc.cores) + 4), top,
                       sc.cores);
  }
  for (std::size_t k = 0; k < sc.lines.size(); ++k) {
    const ScalingLine& line = sc.lines[k];
    const std::string colour = build_color(line.build);
    std::string pts, dots;
    for (const auto& p : line.points) {
      if (!p.speedup.valid()) continue;
      const std::string px = svg_number(x(static_cast<double>(p.n))), py = svg_number(y(p.speedup.value));
      pts += px + "," + py + " ";
      dots += fmt::format("<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"><title>{} @ {}: {}={} {:.2f}x{}</title></circle>", px, py,
                          colour, html_escape(sc.base_case), html_escape(line.build), html_escape(sc.key), p.n, p.speedup.value,
                          p.efficiency ? fmt::format(", efficiency {:.0f}%", *p.efficiency * 100) : "");
    }
    const BuildInfo* b = s.build(line.build);
    out += fmt::format("<g data-build=\"{}\"><polyline class=\"speedup\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>{}</g>\n",
                       html_escape(line.build), colour, b && b->free_threaded ? " stroke-dasharray=\"5 3\"" : "", pts, dots);
    const int ly = top + 8 + static_cast<int>(k) * 16;
    const int lx = left + static_cast<int>(plot_w) + 12;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text>\n", lx,
                       ly - 2, colour, lx + 19, ly, svg_label(line.build, 18));
  }
  return out + "</svg>\n";
}

}  // namespace gilhost
