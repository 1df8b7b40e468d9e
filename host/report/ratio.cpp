#include "report/ratio.hpp"

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
  // Nothing pairs: the ratio of the medians, bounded by the ratios of every run with every run.
  std::vector<double> a, b;
  for (const auto* r : num) a.push_back(wall_of(*r));
  for (const auto* r : den) b.push_back(wall_of(*r));
  out.value = median_of(a) / median_of(b);
  out.lo = *std::min_element(a.begin(), a.end()) / *std::max_element(b.begin(), b.end());
  out.hi = *std::max_element(a.begin(), a.end()) / *std::min_element(b.begin(), b.end());
  out.pairs = static_cast<int>(a.size() * b.size());
  out.paired = false;
  return out;
}

std::string format_ratio(const RatioStat& r) {
  if (!r.valid()) return "-";
  if (!r.paired) return fmt::format("{:.2f}x ({:.2f}–{:.2f})", r.value, r.lo, r.hi);
  if (r.pairs == 1) return fmt::format("{:.2f}x", r.value);
  return fmt::format("{:.2f} ± {:.2f}x", r.value, r.mad);
}

std::string format_change(const RatioStat& r) {
  if (!r.valid()) return "-";
  const bool faster = fmt::format("{:.2f}", r.value) != "1.00" && r.value < 1;
  const double factor = faster ? 1 / r.value : r.value;
  const char* word = fmt::format("{:.2f}", r.value) == "1.00" ? "(same)" : faster ? "faster" : "slower";
  if (!r.paired)  // the range of B/A, as a factor of the same direction
    return faster ? fmt::format("{:.2f} x {} ({:.2f}–{:.2f})", factor, word, 1 / r.hi, 1 / r.lo)
                  : fmt::format("{:.2f} x {} ({:.2f}–{:.2f})", factor, word, r.lo, r.hi);
  if (r.pairs == 1) return fmt::format("{:.2f} x {}", factor, word);
  return fmt::format("{:.2f} ± {:.2f} x {}", factor, faster ? r.mad_inverse : r.mad, word);
}

}  // namespace gilhost
