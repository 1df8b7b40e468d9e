#include "report/ratio.hpp"

#include "report/evidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace gilhost {

namespace {

// What a ratio divides: a run's wall time, or a metric it recorded (nullopt: the run does not count).
using ValueOf = std::function<std::optional<double>(const RunRecord&)>;

std::optional<double> wall_of(const RunRecord& r) { return static_cast<double>(r.wall_ns); }

std::string session_of(const RunRecord& r) { return r.origin.source + "#" + std::to_string(r.origin.session.value_or(0)); }

struct Valued {
  const RunRecord* run;
  double value;
};

// The measured ok runs that have a value, with it.
std::vector<Valued> measured_ok(const std::vector<RunRecord>& runs, const ValueOf& value_of) {
  std::vector<Valued> out;
  for (const auto& r : runs)
    if (r.measured_ok())
      if (const auto v = value_of(r)) out.push_back({&r, *v});
  return out;
}

std::vector<double> paired_ratios(const std::vector<Valued>& num, const std::vector<Valued>& den) {
  std::map<std::pair<std::string, int>, double> by_session;
  std::map<int, double> by_repeat;  // the first of each repeat index
  for (const auto& d : den) {
    by_session.emplace(std::make_pair(session_of(*d.run), d.run->repeat), d.value);
    by_repeat.emplace(d.run->repeat, d.value);
  }
  std::vector<double> ratios;
  for (const auto& n : num) {
    auto it = by_session.find({session_of(*n.run), n.run->repeat});
    if (it != by_session.end()) ratios.push_back(n.value / it->second);
  }
  if (!ratios.empty()) return ratios;
  for (const auto& n : num) {
    auto it = by_repeat.find(n.run->repeat);
    if (it != by_repeat.end()) ratios.push_back(n.value / it->second);
  }
  return ratios;
}

// Nothing pairs (or two files' runs, which share no round): the ratio of the medians, bounded by the
// ratios of every run with every run, and its two-sample Hodges-Lehmann estimate.
RatioStat unpaired_ratio_of(const std::vector<Valued>& num, const std::vector<Valued>& den) {
  RatioStat out;
  if (num.empty() || den.empty()) return out;
  std::vector<double> a, b;
  for (const auto& n : num) a.push_back(n.value);
  for (const auto& d : den) b.push_back(d.value);
  out.value = median_of(a) / median_of(b);
  out.lo = *std::min_element(a.begin(), a.end()) / *std::max_element(b.begin(), b.end());
  out.hi = *std::max_element(a.begin(), a.end()) / *std::min_element(b.begin(), b.end());
  out.pairs = static_cast<int>(a.size() * b.size());
  out.paired = false;
  out.estimate = unpaired_ratio_estimate(a, b);
  return out;
}

// Paired round by round where the runs pair, else unpaired.
RatioStat ratio_of(const std::vector<Valued>& num, const std::vector<Valued>& den) {
  RatioStat out;
  if (num.empty() || den.empty()) return out;
  const auto ratios = paired_ratios(num, den);
  if (ratios.empty()) return unpaired_ratio_of(num, den);
  const Stats s = compute_stats(ratios);
  std::vector<std::pair<double, double>> pairs;
  for (double r : ratios) pairs.emplace_back(r, 1.0);
  out.estimate = paired_ratio_estimate(pairs);
  std::vector<double> inverse;
  for (double r : ratios) inverse.push_back(1 / r);
  out.value = s.median;
  out.lo = s.min;
  out.hi = s.max;
  out.mad = s.mad;
  out.mad_inverse = compute_stats(inverse).mad;
  out.pairs = static_cast<int>(ratios.size());
  out.paired = true;
  return out;
}

}  // namespace

std::vector<double> paired_wall_ratios(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  return paired_ratios(measured_ok(num_runs, wall_of), measured_ok(den_runs, wall_of));
}

RatioStat wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  return ratio_of(measured_ok(num_runs, wall_of), measured_ok(den_runs, wall_of));
}

RatioStat unpaired_wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  return unpaired_ratio_of(measured_ok(num_runs, wall_of), measured_ok(den_runs, wall_of));
}

RatioStat metric_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs,
                       const std::string& metric) {
  const ValueOf metric_of = [&metric](const RunRecord& r) -> std::optional<double> {
    if (!r.metrics.is_object()) return std::nullopt;
    const auto it = r.metrics.find(metric);
    if (it == r.metrics.end() || !it->is_number() || !(it->get<double>() > 0)) return std::nullopt;
    return it->get<double>();
  };
  return ratio_of(measured_ok(num_runs, metric_of), measured_ok(den_runs, metric_of));
}

std::string format_ratio(const RatioStat& r) { return r.valid() ? ratio_cell(r.estimate) : "-"; }

std::string format_change(const RatioStat& r) {
  if (!r.valid()) return "-";
  const Estimate& e = r.estimate;
  const std::string n = fmt::format("n={}", e.n);
  const Direction d = ratio_direction(e);
  if (d == Direction::no_difference)
    return e.interval ? fmt::format("no measurable difference ({:.2f}–{:.2f}, {})", e.interval->lo, e.interval->hi, n)
                      : fmt::format("{:.2f}x? (one pair, no interval: {})", e.point, n);
  // The factor of the direction: B 1.25x faster reads from A/B = 1 / (B/A), its interval inverted too.
  if (d == Direction::lower)
    return fmt::format("{:.2f}x faster ({:.2f}–{:.2f}, {})", 1 / e.point, 1 / e.interval->hi, 1 / e.interval->lo, n);
  return fmt::format("{:.2f}x slower ({:.2f}–{:.2f}, {})", e.point, e.interval->lo, e.interval->hi, n);
}

}  // namespace gilhost
