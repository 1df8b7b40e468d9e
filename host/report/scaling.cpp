#include "report/scaling.hpp"

#include <fmt/format.h>

#include "report/evidence.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "util/strings.hpp"

namespace gilhost {

namespace {

// Where a scaling group's cases are found: (base case, swept key, the other values) -> N -> case.
using GroupKey = std::tuple<std::string, std::string, std::string>;

std::string other_values(const CaseInfo& c, const std::string& key) {
  std::vector<std::string> parts;
  for (const auto& v : c.sweep)
    if (v.key != key) parts.push_back(v.key + "=" + v.text);
  return join(parts, ",");
}

double ideal_of(std::int64_t n, std::int64_t n0, int cores) {
  auto usable = [&](std::int64_t x) { return static_cast<double>(cores > 0 ? std::min<std::int64_t>(x, cores) : x); };
  const double base = usable(n0);
  return base > 0 ? usable(n) / base : 0;
}

// A speedup says so only where its interval excludes 1 (report/evidence): "1.85x (1.80–1.90) · 93%", else
// "no diff. (0.90–1.10) n=3". The smallest N against itself is "1.00x".
std::string point_text(const ScalingPoint& p, std::int64_t n0) {
  if (!p.speedup.valid()) return "-";
  if (p.n == n0) return "1.00x";
  if (ratio_direction(p.speedup.estimate) == Direction::no_difference) return ratio_cell(p.speedup.estimate);
  std::string out = ratio_figure(p.speedup.estimate);
  if (p.efficiency) out += fmt::format(" · {:.0f}%", *p.efficiency * 100);
  return out;
}

Table scaling_table(const Scaling& s) {
  Table t;
  t.columns.emplace_back("build");
  for (auto n : s.counts)
    t.columns.emplace_back(s.key + "=" + std::to_string(n) + (s.cores > 0 && n == s.cores ? " (cores)" : ""), Align::right, true,
                           std::to_string(n) + (s.cores > 0 && n == s.cores ? "=cores" : ""));
  for (const auto& line : s.lines) {
    std::vector<std::string> row{line.build};
    for (const auto& p : line.points) row.push_back(point_text(p, s.counts.front()));
    t.add_row(row);
  }
  return t;
}

}  // namespace

std::string scaling_caption(const Scaling& s) {
  const std::string n0 = s.key + "=" + std::to_string(s.counts.front());
  const std::string ideal = s.cores > 0 ? fmt::format("min(N, {0}) / min({1}, {0}) with the machine's {0} cores", s.cores, s.counts.front())
                                        : fmt::format("N / {} (the core count is unknown)", s.counts.front());
  return "speedup: wall(" + n0 + ") / wall(N) on the same build, paired by round (Hodges-Lehmann, its interval; \"no diff.\": no "
         "measurable difference, it holds 1; \"x?\": too few runs for a 95 % interval, no direction stated); efficiency: speedup / ideal, ideal = " + ideal + ".";
}

std::vector<Scaling> build_scaling(const Summary& summary, const std::vector<CaseInfo>& cases, int cores) {
  std::vector<GroupKey> order;
  std::map<GroupKey, std::map<std::int64_t, std::string>> groups;
  for (const auto& c : cases) {
    if (std::find(summary.cases.begin(), summary.cases.end(), c.name) == summary.cases.end()) continue;
    for (const auto& v : c.sweep) {
      if (!v.count) continue;
      GroupKey key{c.base_name.empty() ? c.name.substr(0, c.name.find('[')) : c.base_name, v.key, other_values(c, v.key)};
      if (!groups.count(key)) order.push_back(key);
      groups[key].emplace(*v.count, c.name);
    }
  }
  std::vector<Scaling> out;
  for (const auto& key : order) {
    const auto& by_n = groups[key];
    if (by_n.size() < 2) continue;
    Scaling s;
    std::tie(s.base_case, s.key, s.fixed) = key;
    s.cores = cores;
    for (const auto& entry : by_n) s.counts.push_back(entry.first);
    const std::int64_t n0 = s.counts.front();
    for (const auto& build : summary.interpreters) {
      const Cell* base = summary.cell(by_n.begin()->second, build);
      if (!base || base->runs.empty()) continue;
      ScalingLine line{build, {}};
      for (const auto& [n, name] : by_n) {
        ScalingPoint p{n, name, {}, ideal_of(n, n0, cores), std::nullopt};
        if (const Cell* cell = summary.cell(name, build)) p.speedup = wall_ratio(base->runs, cell->runs);
        if (p.speedup.valid() && p.ideal > 0) p.efficiency = p.speedup.estimate.point / p.ideal;
        line.points.push_back(p);
      }
      s.lines.push_back(std::move(line));
    }
    if (s.lines.empty()) continue;
    s.table = scaling_table(s);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gilhost
