#include "report/thread_lanes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "report/charts.hpp"
#include "measure/thread_states.hpp"
#include "report/html.hpp"
#include "results/results_file.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::size_t index_of(ThreadState s) { return static_cast<std::size_t>(s); }

// "74 % waiting for the GIL, 25 % on CPU": the states a thread (or a cell) spent a whole percent in.
std::string shares_text(const std::array<double, kThreadStateCount>& share) {
  std::vector<std::string> parts;
  for (ThreadState s : kThreadStates)
    if (share[index_of(s)] >= 0.005) parts.push_back(percent_text(share[index_of(s)]) + " " + thread_state_label(s));
  return parts.empty() ? "no time" : join(parts, ", ");
}

std::array<double, kThreadStateCount> shares_of(const ThreadTimes& times) {
  std::array<double, kThreadStateCount> out{};
  for (ThreadState s : kThreadStates) out[index_of(s)] = times.share(s);
  return out;
}

// A gathered stretch from `start` as one part per state, each as long as that state held in it (so a lane
// shows how its time was shared, not just what won); the state drawn last goes first, to join its rect.
std::vector<StateSpan> split_by_state(std::int64_t start, const std::array<std::int64_t, kThreadStateCount>& held,
                                      std::optional<ThreadState> previous) {
  std::vector<ThreadState> order;
  if (previous && held[index_of(*previous)] > 0) order.push_back(*previous);
  for (ThreadState s : kThreadStates)
    if (held[index_of(s)] > 0 && s != previous) order.push_back(s);
  std::vector<StateSpan> parts;
  for (ThreadState s : order) {
    parts.push_back({start, start + held[index_of(s)], s});
    start = parts.back().end_ns;
  }
  return parts;
}

// The legend of the states, rows wrapped at `width`; `height` gets the room it took.
std::string legend_svg(int left, int top, int width, int& height) {
  const int row_h = 18;
  std::string out = "<g class=\"legend\">";
  int x = left, y = top;
  for (ThreadState s : kThreadStates) {
    const std::string label = thread_state_label(s);
    const int item_w = 14 + 5 + static_cast<int>(6.5 * static_cast<double>(label.size())) + 16;
    if (x > left && x + item_w > left + width) {
      x = left;
      y += row_h;
    }
    out += fmt::format("<g class=\"legend-item\" data-state=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>",
                       thread_state_name(s), x, y + 3, thread_state_color(s), x + 19, y + 8, html_escape(label));
    x += item_w;
  }
  height = y - top + row_h;
  return out + "</g>\n";
}

// The unit of a time axis whose end is `end_ns`.
struct TimeUnit {
  double ns_per_unit;
  const char* name;
};
TimeUnit time_unit_for(double end_ns) { return end_ns >= 1e9 ? TimeUnit{1e9, "s"} : TimeUnit{1e6, "ms"}; }

// The threads that get a lane: the Python threads first, in the record's order, then the others.
std::vector<const ThreadRecord*> lane_threads(const ThreadStates& ts) {
  std::vector<const ThreadRecord*> out;
  for (const auto& t : ts.threads) out.push_back(&t);
  std::stable_partition(out.begin(), out.end(), [](const ThreadRecord* t) { return t->python; });
  if (out.size() > kMaxThreadLanes) out.resize(kMaxThreadLanes);
  return out;
}

std::string lane_svg(const ThreadRecord& t, double y, double lane_h, int left, double ns_per_px) {
  const std::string name = t.main ? t.name + " (main)" : t.name;
  const std::string tip = fmt::format("{} (tid {}, pid {}{}): {}", name, t.tid, t.pid, t.python ? "" : ", not Python",
                                      shares_text(shares_of(t.times)));
  std::string out = fmt::format("<g class=\"lane\" data-tid=\"{}\" data-python=\"{}\"><title>{}</title>", t.tid, t.python ? "true" : "false", html_escape(tip));
  out += fmt::format("<text class=\"lane-label{}\" x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{} {}</text>",
                     t.python ? "" : " other", left - 6, svg_number(y + lane_h / 2), svg_label(name, 18), t.tid);
  for (const auto& span : drawn_spans(thread_spans(t), kMinSpanPx * ns_per_px)) {
    const double x0 = left + static_cast<double>(span.start_ns) / ns_per_px;
    const double w = static_cast<double>(span.end_ns - span.start_ns) / ns_per_px;
    out += fmt::format("<rect class=\"seg\" data-state=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                       thread_state_name(span.state), svg_number(x0), svg_number(y), fmt::format("{:.2f}", w), svg_number(lane_h),
                       thread_state_color(span.state));
  }
  return out + "</g>\n";
}

// "repeat 1 (wall 102 ms), 5 threads sampled every 10 ms (every 30 ms after the first 250 ms), 120 probes
// between, GIL waits told apart"
std::string lanes_caption(const RunRecord& run) {
  const ThreadStates& ts = *run.thread_states;
  const std::string gil = ts.gil == "located" ? "GIL waits told apart" : ts.gil == "none" ? "no GIL" : ts.gil;
  // Probes read the threads seen in two different waits, or in one again after they ran, between ticks
  // (measure/thread_states.hpp).
  const std::string probes = ts.probes > 0 ? fmt::format(", {} probes of threads in mixed waits between", group_thousands(ts.probes)) : "";
  // Read every interval for the first ticks, then every kStride intervals (measure/thread_states.hpp).
  return fmt::format("repeat {} (wall {}), {} threads sampled every {} ms (every {} ms after the first {} ms){}, {}", run.repeat,
                     format_seconds(static_cast<double>(run.wall_ns) / 1e9), ts.threads.size() + static_cast<std::size_t>(ts.threads_not_kept),
                     ts.interval_ms, ts.interval_ms * ThreadStateSampler::kStride, ts.interval_ms * ThreadStateSampler::kFullRateTicks,
                     probes, gil);
}

}  // namespace

const char* thread_state_color(ThreadState state) {
  switch (state) {
    case ThreadState::cpu: return "#59a14f";
    case ThreadState::runqueue: return "#edc948";
    case ThreadState::gil: return "#e15759";
    case ThreadState::lock: return "#b07aa1";
    case ThreadState::io: return "#4e79a7";
    case ThreadState::sleep: return "#bab0ac";
    case ThreadState::other: return "#9c755f";
  }
  return "#9c755f";
}

std::vector<StateSpan> drawn_spans(const std::vector<StateSpan>& spans, double min_ns) {
  if (!(min_ns > 0)) min_ns = 1;
  std::vector<StateSpan> out;
  auto push = [&](const StateSpan& s) {
    if (!out.empty() && out.back().state == s.state && out.back().end_ns == s.start_ns) out.back().end_ns = s.end_ns;
    else out.push_back(s);
  };
  // Narrow spans gathered until they reach min_ns: where the gathering starts, and how long each state held.
  std::optional<std::int64_t> from;
  std::int64_t to = 0;
  std::array<std::int64_t, kThreadStateCount> held{};
  auto flush = [&] {
    if (!from) return;
    const std::optional<ThreadState> previous = out.empty() ? std::nullopt : std::optional<ThreadState>(out.back().state);
    for (const auto& part : split_by_state(*from, held, previous)) push(part);
    from.reset();
    held.fill(0);
  };
  for (const auto& s : spans) {
    if (static_cast<double>(s.end_ns - s.start_ns) >= min_ns) {
      flush();
      push(s);
      continue;
    }
    if (from && to != s.start_ns) flush();  // a gap ends the gathering
    if (!from) from = s.start_ns;
    to = s.end_ns;
    held[index_of(s.state)] += s.end_ns - s.start_ns;
    if (static_cast<double>(to - *from) >= min_ns) flush();
  }
  flush();
  return out;
}

std::string thread_lanes_svg(const RunRecord& run) {
  if (!run.thread_states) return "";
  const ThreadStates& ts = *run.thread_states;
  const std::int64_t end_ns = timeline_end_ns(ts);
  if (end_ns <= 0) return "<p class=\"muted\">no thread timeline in this run</p>\n";
  const std::vector<const ThreadRecord*> lanes = lane_threads(ts);
  const std::size_t more = ts.threads.size() - lanes.size() + static_cast<std::size_t>(ts.threads_not_kept);
  const int width = 880, left = 170, right = 34, top = 6, lane_h = 14, gap = 4, axis_h = 32, more_h = more ? 16 : 0;
  const double plot_w = width - left - right;
  const int lanes_h = static_cast<int>(lanes.size()) * (lane_h + gap);
  int legend_h = 0;
  const std::string legend = legend_svg(left, top + lanes_h + axis_h + more_h, width - left - right, legend_h);
  const int height = top + lanes_h + axis_h + more_h + legend_h + 4;

  // The lanes fill the width: the axis ends where the last thread does, its ticks round numbers within it.
  const TimeUnit unit = time_unit_for(static_cast<double>(end_ns));
  std::vector<double> ticks = nice_ticks(static_cast<double>(end_ns) / unit.ns_per_unit);
  while (ticks.size() > 1 && ticks.back() * unit.ns_per_unit > static_cast<double>(end_ns) * (1 + 1e-9)) ticks.pop_back();
  const double ns_per_px = static_cast<double>(end_ns) / plot_w;
  auto x = [&](double ns) { return left + ns / ns_per_px; };

  std::string out = svg_open("lanes", width, height, "thread states over time, one lane per thread");
  const int bottom = top + lanes_h;
  for (double t : ticks) {
    const double px = x(t * unit.ns_per_unit);
    out += fmt::format("<line class=\"gridline\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", svg_number(px), top, bottom);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:g} {}</text>\n", svg_number(px), bottom + 14, t, unit.name);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"value\">time since the run started</text>\n", width - right,
                     bottom + 28);
  for (std::size_t k = 0; k < lanes.size(); ++k)
    out += lane_svg(*lanes[k], top + static_cast<double>(k) * (lane_h + gap), lane_h, left, ns_per_px);
  if (more)
    out += fmt::format("<text class=\"more\" x=\"{}\" y=\"{}\">and {} more thread{}</text>\n", left, bottom + axis_h + 10, more,
                       more == 1 ? "" : "s");
  return out + legend + "</svg>\n";
}

std::string shares_svg(const std::vector<SharesRow>& rows, const std::string& title) {
  if (rows.empty()) return "";
  // Room for "case @ build" labels where a row names its case.
  const bool long_labels = std::any_of(rows.begin(), rows.end(), [](const SharesRow& r) { return r.label.size() > 24; });
  const int width = long_labels ? 760 : 600, left = long_labels ? 310 : 150, right = 104, top = 6, row_h = 22;
  const double plot_w = width - left - right;
  int legend_h = 0;
  const std::string legend = legend_svg(10, top + static_cast<int>(rows.size()) * row_h + 8, width - 20, legend_h);
  const int height = top + static_cast<int>(rows.size()) * row_h + 8 + legend_h + 4;
  std::string out = svg_open("threadshares", width, height, title);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const ThreadShares& sh = *rows[k].shares;
    const double y = top + static_cast<double>(k) * row_h;
    double total = 0;
    for (double v : sh.median) total += v;
    out += fmt::format("<g class=\"shares\" data-build=\"{}\"><title>{}</title>", html_escape(rows[k].label),
                       html_escape(rows[k].label + ": " + shares_text(sh.median) + " (median over " + std::to_string(sh.runs) + " runs)"));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>", left - 6, svg_number(y + 7),
                       svg_label(rows[k].label, long_labels ? 48 : 24));
    double x = left;
    for (ThreadState st : kThreadStates) {
      const double w = total > 0 ? plot_w * sh.share(st) / total : 0;
      if (w <= 0) continue;
      out += fmt::format("<rect class=\"sharebar\" data-state=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{}\"/>",
                         thread_state_name(st), svg_number(x), svg_number(y), fmt::format("{:.2f}", w), thread_state_color(st));
      x += w;
    }
    const std::string value = sh.no_gil ? "no GIL" : "GIL wait " + gil_wait_text(*rows[k].shares);
    out += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">{}</text></g>\n", left + plot_w + 6,
                       svg_number(y + 7), html_escape(value));
  }
  return out + legend + "</svg>\n";
}

std::string thread_shares_svg(const Section& s, const std::string& case_name) {
  std::vector<SharesRow> rows;
  for (const auto& i : s.summary.interpreters)
    if (const Cell* cell = s.summary.cell(case_name, i); cell && cell->threads) rows.push_back({i, &*cell->threads});
  return shares_svg(rows, "where the Python threads' time went, per build: " + case_name);
}

std::string thread_charts_html(const Section& s, const std::string& case_name) {
  std::vector<std::pair<std::string, const RunRecord*>> runs;
  for (const auto& i : s.summary.interpreters)
    if (const Cell* cell = s.summary.cell(case_name, i))
      if (const RunRecord* run = median_thread_run(cell->runs)) runs.emplace_back(i, run);
  if (runs.empty()) return "";
  std::string out = "<div class=\"threads\">\n<figure class=\"threadshares\"><figcaption>where the Python threads' time went "
                    "(median share over the runs)</figcaption>\n" + thread_shares_svg(s, case_name) + "</figure>\n";
  out += "<details class=\"lanes\"><summary>thread timelines: the median run of each build, one lane per thread</summary>\n";
  for (const auto& [build, run] : runs) {
    // Read again from its file, one run at a time: an HTML report's model was read without timelines.
    const bool again = run->origin.can_read_again();
    const RunRecord drawn = again ? read_run_again(*run) : RunRecord{};
    out += "<figure class=\"lanes\"><figcaption>" + html_escape(build) + " <span class=\"muted\">" + html_escape(lanes_caption(*run)) + "</span></figcaption>\n" +
           thread_lanes_svg(again ? drawn : *run) + "</figure>\n";
  }
  return out + "</details>\n</div>\n";
}

}  // namespace gilhost
