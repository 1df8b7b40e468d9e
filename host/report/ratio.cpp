#include "report/ratio.hpp"

#include "report/evidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gilhost {

namespace {

double wall_of(const RunRecord& r) { return static_cast<double>(r.wall_ns); }

std::string session_of(const RunRecord& r) { return r.origin.source + "#" + std::to_string(r.origin.session.value_or(0)); }

std::vector<const RunRecord*> measured_ok(const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> out;
  for (const auto& r : runs)
    if (r.measured_ok()) out.push_back(&r);
  return out;
}

}  // namespace

std::vector<double> paired_wall_ratios(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  const auto num = measured_ok(num_runs), den = measured_ok(den_runs);
  std::map<std::pair<std::string, int>, double> by_session;
  std::map<int, double> by_repeat;  // the first of each repeat index
  for (const auto* r : den) {
    by_session.emplace(std::make_pair(session_of(*r), r->repeat), wall_of(*r));
    by_repeat.emplace(r->repeat, wall_of(*r));
  }
  std::vector<double> ratios;
  for (const auto* r : num) {
    auto it = by_session.find({session_of(*r), r->repeat});
    if (it != by_session.end()) ratios.push_back(wall_of(*r) / it->second);
  }
  if (!ratios.empty()) return ratios;
  for (const auto* r : num) {
    auto it = by_repeat.find(r->repeat);
    if (it != by_repeat.end()) ratios.push_back(wall_of(*r) / it->second);
  }
  return ratios;
}

RatioStat wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  RatioStat out;
  const auto num = measured_ok(num_runs), den = measured_ok(den_runs);
  if (num.empty() || den.empty()) return out;
  if (const auto ratios = paired_wall_ratios(num_runs, den_runs); !ratios.empty()) {
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
  return unpaired_wall_ratio(num_runs, den_runs);
}

RatioStat unpaired_wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  RatioStat out;
  const auto num = measured_ok(num_runs), den = measured_ok(den_runs);
  if (num.empty() || den.empty()) return out;
  // The ratio of the medians, bounded by the ratios of every run with every run.
  std::vector<double> a, b;
  for (const auto* r : num) a.push_back(wall_of(*r));
  for (const auto* r : den) b.push_back(wall_of(*r));
  out.value = median_of(a) / median_of(b);
  out.lo = *std::min_element(a.begin(), a.end()) / *std::max_element(b.begin(), b.end());
  out.hi = *std::max_element(a.begin(), a.end()) / *std::min_element(b.begin(), b.end());
  out.pairs = static_cast<int>(a.size() * b.size());
  out.paired = false;
  out.estimate = unpaired_ratio_estimate(a, b);
  return out;
}

std::string format_ratio(const RatioStat& r) { return r.valid() ? ratio_cell(r.estimate) : "-"; }

std::string format_change(const RatioStat& r) {
  if (!r.valid()) return "-";
  const Estimate& e = r.estimate;
  const std::string n = fmt::format("n={}", e.n);
  const Direction d = ratio_direction(e);
  if (d == Direction::no_difference)
    return e.interval ? fmt::format("no measurable difference ({:.2f}–{:.2f}, {})", e.interval->lo, e.interval->hi, n)
                      : "no measurable difference (" + n + ")";
  // The factor of the direction: B 1.25x faster reads from A/B = 1 / (B/A), its interval inverted too.
  if (d == Direction::lower)
    return fmt::format("{:.2f}x faster ({:.2f}–{:.2f}, {})", 1 / e.point, 1 / e.interval->hi, 1 / e.interval->lo, n);
  return fmt::format("{:.2f}x slower ({:.2f}–{:.2f}, {})", e.point, e.interval->lo, e.interval->hi, n);
}

}  // namespace gilhost
