#include "report/ratio.hpp"

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

RatioStat ratio_of(const std::vector<Valued>& num, const std::vector<Valued>& den) {
  RatioStat out;
  if (num.empty() || den.empty()) return out;
  if (const auto ratios = paired_ratios(num, den); !ratios.empty()) {
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
  for (const auto& n : num) a.push_back(n.value);
  for (const auto& d : den) b.push_back(d.value);
  out.value = median_of(a) / median_of(b);
  out.lo = *std::min_element(a.begin(), a.end()) / *std::max_element(b.begin(), b.end());
  out.hi = *std::max_element(a.begin(), a.end()) / *std::min_element(b.begin(), b.end());
  out.pairs = static_cast<int>(a.size() * b.size());
  out.paired = false;
  return out;
}

}  // namespace

std::vector<double> paired_wall_ratios(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  return paired_ratios(measured_ok(num_runs, wall_of), measured_ok(den_runs, wall_of));
}

RatioStat wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs) {
  return ratio_of(measured_ok(num_runs, wall_of), measured_ok(den_runs, wall_of));
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
