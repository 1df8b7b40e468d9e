#include "report/headline.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "report/evidence.hpp"
#include "report/metrics.hpp"
#include "report/ratio.hpp"
#include "report/stats.hpp"
#include "report/threads.hpp"

namespace gilhost {

namespace {

// Written whole below this; above, in three significant digits (1e+308, not 309 of them).
constexpr double kWholeUpTo = 1e15;

// The number at `key` of each measured ok run of a cell, by repeat index (the first of each).
std::map<int, double> result_by_repeat(const Cell* cell, const std::string& key) {
  std::map<int, double> out;
  if (!cell) return out;
  for (const auto& r : cell->runs)
    if (r.measured_ok())
      if (auto v = result_number(r, key)) out.emplace(r.repeat, *v);
  return out;
}

std::optional<Estimate> median_result(const Cell* cell, const std::string& key) {
  std::vector<double> values;
  for (const auto& [repeat, v] : result_by_repeat(cell, key)) values.push_back(v);
  if (values.empty()) return std::nullopt;
  return median_estimate(values);
}

// The cell's GIL wait share as a percentage (what a gil_wait view shows), unknown where it is.
std::optional<Estimate> gil_wait_percent(const Cell* cell) {
  if (!cell || !cell->threads || !cell->threads->gil_wait_estimate) return std::nullopt;
  Estimate e = *cell->threads->gil_wait_estimate;
  e.point *= 100;
  if (e.interval) e.interval = Interval{100 * e.interval->lo, 100 * e.interval->hi, e.interval->level};
  return e;
}

// A ratio of a result key: paired by repeat index where both cells have one, else the two samples.
std::optional<Estimate> key_ratio(const Cell* a, const Cell* b, const std::string& key) {
  const auto num = result_by_repeat(a, key), den = result_by_repeat(b, key);
  std::vector<std::pair<double, double>> pairs;
  for (const auto& [repeat, v] : num)
    if (auto it = den.find(repeat); it != den.end()) pairs.emplace_back(v, it->second);
  Estimate e;
  if (!pairs.empty()) e = paired_ratio_estimate(pairs);
  if (e.n == 0) {
    std::vector<double> x, y;
    for (const auto& [repeat, v] : num) x.push_back(v);
    for (const auto& [repeat, v] : den) y.push_back(v);
    e = unpaired_ratio_estimate(x, y);
  }
  if (e.n == 0) return std::nullopt;
  return e;
}

std::optional<Estimate> view_estimate(const Summary& sum, const ViewSpec& v, const std::string& build) {
  const Cell* a = sum.cell(v.a, build);
  if (v.kind == ViewKind::value) return median_result(a, v.key);
  if (v.kind == ViewKind::gil_wait) return gil_wait_percent(a);
  const Cell* b = sum.cell(v.b, build);
  if (!a || !b) return std::nullopt;
  if (!v.key.empty()) return key_ratio(a, b, v.key);
  const RatioStat r = wall_ratio(a->runs, b->runs);
  return r.valid() ? std::optional<Estimate>(r.estimate) : std::nullopt;
}

// "12.5 % (11.8–13.1) n=5": a value with its interval, each bound as the point is written.
std::string value_text(const Estimate& e, const std::string& unit, bool whole_percent) {
  auto number = [&](double x) {
    if (std::abs(x) >= kWholeUpTo) return fmt::format("{:.3g}", x);
    if (whole_percent || std::abs(x) >= 100) return fmt::format("{:.0f}", x);
    return unit == "x" ? fmt::format("{:.2f}", x) : fmt::format("{:.3g}", x);
  };
  std::string text = whole_percent ? percent_text(e.point / 100) : headline_number(e.point, unit);
  if (e.interval) text += " (" + number(e.interval->lo) + "–" + number(e.interval->hi) + ")";
  return text + " " + runs_text(e.n);
}

std::string how_text(const ViewSpec& v) {
  if (v.kind == ViewKind::gil_wait)
    return "share of the Python threads' time " + v.a + " spent waiting for the GIL (thread states), median over the measured runs";
  const std::string key = figure_label(v.key);
  if (v.kind == ViewKind::value) return "median of " + key + " in the result of " + v.a + " over the measured runs";
  if (v.key.empty())
    return "case time of " + v.a + " / case time of " + v.b + ", paired by round (Hodges-Lehmann, its interval; \"no diff.\": no measurable difference, its 95 % interval holds 1; \"x?\": too few runs for a 95 % interval (one run: none), no direction stated)";
  return key + " of " + v.a + " / " + key + " of " + v.b + ", paired by round (Hodges-Lehmann, its interval)";
}

}  // namespace

std::string headline_number(double value, const std::string& unit) {
  const std::string number = std::abs(value) >= 100 && std::abs(value) < kWholeUpTo ? fmt::format("{:.0f}", value) : fmt::format("{:.3g}", value);
  if (unit == "x") return fmt::format("{:.2f}x", value);
  if (unit == "%") return number + " %";
  return unit.empty() ? number : number + " " + unit;
}

std::vector<Headline> build_headlines(const Summary& sum, const std::vector<ViewSpec>& views) {
  std::vector<Headline> out;
  for (const auto& v : views) {
    Headline h;
    h.spec = v;
    h.unit = !v.unit.empty() ? v.unit : v.kind == ViewKind::ratio ? "x" : v.kind == ViewKind::gil_wait ? "%" : "";
    h.how = how_text(v);
    if (v.article) h.article_text = headline_number(*v.article, h.unit);
    for (const auto& build : sum.interpreters) {
      HeadlineValue hv;
      hv.build = build;
      hv.estimate = view_estimate(sum, v, build);
      hv.text = "-";
      if (hv.estimate) {
        hv.value = hv.estimate->point;
        // A ratio claims a direction only where its interval excludes 1 (report/evidence).
        hv.supported = v.kind != ViewKind::ratio || ratio_direction(*hv.estimate) != Direction::no_difference;
        if (v.kind != ViewKind::ratio) hv.text = value_text(*hv.estimate, h.unit, v.kind == ViewKind::gil_wait && h.unit == "%");
        else if (!hv.supported) hv.text = ratio_cell(*hv.estimate);
        else hv.text = ratio_figure(*hv.estimate) + " " + runs_text(hv.estimate->n);
      }
      h.values.push_back(std::move(hv));
    }
    out.push_back(std::move(h));
  }
  return out;
}

Table headlines_table(const std::vector<Headline>& headlines, const std::vector<std::string>& builds) {
  Table t;
  t.columns.push_back(Column("view").wrapped());  // a title is prose: wrapped, never cut mid-phrase
  for (const auto& b : builds) t.columns.emplace_back(b, Align::right);
  t.columns.emplace_back("the article", Align::right);
  for (const auto& h : headlines) {
    std::vector<std::string> row{h.spec.title};
    for (const auto& v : h.values) row.push_back(v.text);
    row.push_back(h.article_text.empty() ? "-" : h.article_text);
    t.add_row(row);
  }
  return t;
}

}  // namespace gilhost
