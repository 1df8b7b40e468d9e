#include "report/evidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/stats.hpp"
#include "util/strings.hpp"

namespace gilhost {

Direction ratio_direction(const Estimate& r) {
  if (!r.excludes(1.0)) return Direction::no_difference;
  return r.point > 1 ? Direction::higher : Direction::lower;
}

const char* direction_name(Direction d) {
  switch (d) {
    case Direction::higher: return "higher";
    case Direction::lower: return "lower";
    case Direction::no_difference: return "no_difference";
  }
  return "no_difference";
}

std::string no_difference_why(const Estimate& r) {
  if (!r.interval) return fmt::format("n = {}", r.n);
  if (!r.interval->at_95())
    return fmt::format("n = {}: no 95 % interval below 6 runs (the range reaches {:.0f} %)", r.n, 100 * r.interval->level);
  return fmt::format("n = {}: the 95 % interval ({:.2f}–{:.2f}) holds 1", r.n, r.interval->lo, r.interval->hi);
}

std::string interval_suffix(const Estimate& e, int decimals) {
  if (!e.interval) return "";
  return fmt::format("({:.{}f}–{:.{}f})", e.interval->lo, decimals, e.interval->hi, decimals);
}

namespace {
// A ratio to two decimals, or two significant digits below 0.1 (a case 5,000 times faster is not "0.00").
std::string ratio_number(double x) { return std::fabs(x) >= 0.095 ? fmt::format("{:.2f}", x) : fmt::format("{:.2g}", x); }
std::string ratio_range(const Interval& i) { return "(" + ratio_number(i.lo) + "–" + ratio_number(i.hi) + ")"; }
}  // namespace

std::string ratio_figure(const Estimate& r) {
  if (r.n == 0) return "-";
  return ratio_number(r.point) + "x" + (r.interval ? " " + ratio_range(*r.interval) : "");
}

std::string ratio_cell(const Estimate& r, bool with_n) {
  if (r.n == 0) return "-";
  if (ratio_direction(r) != Direction::no_difference) return ratio_figure(r);
  const std::string n = with_n ? fmt::format(" n={}", r.n) : "";
  // Too few runs for a 95 % interval (below 6), or one pair with no interval at all: the figure with a "?",
  // never a stated direction, and never "no difference" either (one run of 32x is not evidence of none).
  if (!r.interval) return ratio_number(r.point) + "x?" + n;
  if (!r.interval->at_95()) return ratio_number(r.point) + "x? " + ratio_range(*r.interval) + n;
  return "no diff. " + ratio_range(*r.interval) + n;
}

std::string seconds_figure(const Estimate& s) {
  if (s.n == 0) return "-";
  const std::string point = format_seconds(s.point);
  if (!s.interval) return point;
  // The interval in the point's unit and to its number of decimals: "312 ms (300–330)".
  const double a = std::fabs(s.point);
  const double scale = a >= 1.0 ? 1 : a >= 1e-3 ? 1e3 : 1e6;
  // Each bound to three significant digits, as the point: "83.4 ms (77.4–138)".
  auto bound = [&](double x) {
    const double shown = std::fabs(x * scale);
    return fmt::format("{:.{}f}", x * scale, shown >= 100 ? 0 : shown >= 10 ? 1 : 2);
  };
  return point + " (" + bound(s.interval->lo) + "–" + bound(s.interval->hi) + ")";
}

namespace {

struct TimedRun {
  double s = 0;
  int repeat = 0;
};

std::vector<TimedRun> timed_runs(const std::vector<RunRecord>& runs) {
  std::vector<TimedRun> out;
  for (const auto& r : runs)
    if (r.measured_ok()) out.push_back({static_cast<double>(r.wall_ns) / 1e9, r.repeat});
  std::sort(out.begin(), out.end(), [](const TimedRun& a, const TimedRun& b) { return a.s < b.s; });
  return out;
}

void find_outliers(const std::vector<TimedRun>& sorted, const Stats& st, Stability& out) {
  if (sorted.size() < stability::kMinOutlierRuns) return;
  const double bound = std::max(stability::kOutlierMads * 1.4826 * st.mad, stability::kOutlierShare * st.median);
  for (const auto& r : sorted)
    if (std::fabs(r.s - st.median) > bound) {
      out.outlier_runs.push_back(r.repeat + 1);
      out.outlier_s.push_back(r.s);
    }
  out.outliers = !out.outlier_runs.empty();
}

// Two modes: the widest gap between neighbouring sorted times, with enough runs on each side, wider than a
// share of the median and than either side's own range.
void find_modes(const std::vector<TimedRun>& sorted, double median, Stability& out) {
  const std::size_t n = sorted.size();
  if (n < stability::kMinModeRuns || median <= 0) return;
  const std::size_t least = std::max<std::size_t>(2, n / 5);
  std::size_t cut = 0;
  double gap = 0;
  for (std::size_t k = least; k + least <= n; ++k)
    if (sorted[k].s - sorted[k - 1].s > gap) {
      gap = sorted[k].s - sorted[k - 1].s;
      cut = k;
    }
  if (cut == 0) return;
  const double low_range = sorted[cut - 1].s - sorted[0].s, high_range = sorted[n - 1].s - sorted[cut].s;
  if (gap < stability::kModeGapShare * median || gap < stability::kModeGapSpread * std::max(low_range, high_range)) return;
  std::vector<double> low, high;
  for (std::size_t k = 0; k < n; ++k) (k < cut ? low : high).push_back(sorted[k].s);
  out.two_modes = true;
  out.low_mode = low.size();
  out.high_mode = high.size();
  out.low_mode_s = median_of(low);
  out.high_mode_s = median_of(high);
}

std::string stability_why(const Stability& s, const Estimate& wall) {
  std::vector<std::string> parts;
  if (s.wide && wall.interval)
    parts.push_back(fmt::format("wide spread: ±{:.0f} % ({} to {})", 100 * s.spread, format_seconds(wall.interval->lo),
                                format_seconds(wall.interval->hi)));
  if (s.outliers) {
    std::vector<std::string> runs;
    for (std::size_t k = 0; k < s.outlier_runs.size(); ++k)
      runs.push_back(fmt::format("#{} ({})", s.outlier_runs[k], format_seconds(s.outlier_s[k])));
    parts.push_back(fmt::format("outlier run{} {} against a median of {}", runs.size() == 1 ? "" : "s", join(runs, ", "),
                                format_seconds(wall.point)));
  }
  if (s.two_modes)
    parts.push_back(fmt::format("two modes: {} runs near {}, {} near {}", s.low_mode, format_seconds(s.low_mode_s), s.high_mode,
                                format_seconds(s.high_mode_s)));
  if (s.load_avg) parts.push_back(fmt::format("load average up to {:.1f} during its runs", *s.load_avg));
  if (s.steal && *s.steal >= ThreadStates::kNotableSteal)
    parts.push_back(fmt::format("the virtual machine's host took up to {:.0f} % of its CPUs (steal)", 100 * *s.steal));
  return join(parts, "; ");
}

}  // namespace

Stability assess_stability(const std::vector<RunRecord>& runs) {
  Stability out;
  const std::vector<TimedRun> sorted = timed_runs(runs);
  if (sorted.size() < stability::kMinRuns) return out;
  std::vector<double> times;
  for (const auto& r : sorted) times.push_back(r.s);
  const Estimate wall = median_estimate(times);
  const Stats st = compute_stats(times);
  if (wall.interval && wall.point > 0) {
    out.spread = (wall.interval->hi - wall.interval->lo) / 2 / wall.point;
    out.wide = out.spread > stability::kWideSpread;
  }
  find_outliers(sorted, st, out);
  find_modes(sorted, st.median, out);
  if (!out.unstable()) return out;
  for (const auto& r : runs) {
    if (!r.measured_ok()) continue;
    if (r.load_avg) out.load_avg = std::max(out.load_avg.value_or(0.0), *r.load_avg);
    if (r.thread_states && r.thread_states->steal_share)
      out.steal = std::max(out.steal.value_or(0.0), *r.thread_states->steal_share);
  }
  out.why = stability_why(out, wall);
  return out;
}

CellPrecision cell_precision(const Estimate& wall, const std::vector<RunRecord>& runs, const ExperimentInfo& experiment) {
  CellPrecision p;
  p.target = experiment.precision;
  p.achieved = wall.relative_precision();
  const bool budget = std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.stopped.find("budget") != std::string::npos; });
  if (p.target && *p.target > 0 && p.achieved && *p.achieved <= *p.target) p.stopped_by = "target";
  else if (budget) p.stopped_by = "budget";
  else p.stopped_by = p.target && *p.target > 0 ? "rounds" : "repeat";
  return p;
}

std::string precision_note(const std::string& cell, const CellPrecision& p) {
  if (!p.short_of_target()) return "";
  const std::string known = p.achieved ? fmt::format("known to ±{:.1f} %", 100 * *p.achieved) : "no 95 % interval (too few runs)";
  const std::string why = p.stopped_by == "budget" ? "the cell's time budget stopped it (--max-cell-time)"
                                                   : "its rounds ran out before the target was met";
  return fmt::format("{}: {} against a target of {:g} %: {}", cell, known, 100 * *p.target, why);
}

}  // namespace gilhost
