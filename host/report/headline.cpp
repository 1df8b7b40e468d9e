#include "report/headline.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/metrics.hpp"
#include "report/ratio.hpp"
#include "report/stats.hpp"
#include "report/threads.hpp"

namespace gilhost {

namespace {

// The median over a cell's measured ok runs of the number at `key`.
std::optional<double> median_result(const Cell* cell, const std::string& key) {
  if (!cell) return std::nullopt;
  std::vector<double> values;
  for (const auto& r : cell->runs)
    if (r.is_ok())
      if (auto v = result_number(r, key)) values.push_back(*v);
  if (values.empty()) return std::nullopt;
  return median_of(values);
}

// The cell's GIL wait share as a percentage (what a gil_wait view shows).
std::optional<double> gil_wait_percent(const Cell* cell) {
  if (!cell || !cell->threads || !cell->threads->gil_wait) return std::nullopt;
  return 100 * *cell->threads->gil_wait;
}

std::optional<double> view_value(const Summary& sum, const ViewSpec& v, const std::string& build) {
  const Cell* a = sum.cell(v.a, build);
  if (v.kind == ViewKind::value) return median_result(a, v.key);
  if (v.kind == ViewKind::gil_wait) return gil_wait_percent(a);
  const Cell* b = sum.cell(v.b, build);
  if (!a || !b) return std::nullopt;
  if (v.key.empty()) {
    const RatioStat r = wall_ratio(a->runs, b->runs);
    return r.valid() ? std::optional<double>(r.value) : std::nullopt;
  }
  const auto num = median_result(a, v.key), den = median_result(b, v.key);
  if (!num || !den || *den == 0) return std::nullopt;
  return *num / *den;
}

std::string how_text(const ViewSpec& v) {
  if (v.kind == ViewKind::gil_wait)
    return "share of the Python threads' time " + v.a + " spent waiting for the GIL (thread states), median over the measured runs";
  const std::string key = figure_label(v.key);
  if (v.kind == ViewKind::value) return "median of " + key + " in the result of " + v.a + " over the measured runs";
  if (v.key.empty()) return "case time of " + v.a + " / case time of " + v.b + ", paired by round (median)";
  return "median " + key + " of " + v.a + " / median " + key + " of " + v.b;
}

}  // namespace

std::string headline_number(double value, const std::string& unit) {
  const std::string number = std::abs(value) >= 100 ? fmt::format("{:.0f}", value) : fmt::format("{:.3g}", value);
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
      HeadlineValue hv{build, view_value(sum, v, build), "-"};
      // A GIL wait share reads as the details' column does: whole percentages.
      if (hv.value) hv.text = v.kind == ViewKind::gil_wait && h.unit == "%" ? percent_text(*hv.value / 100) : headline_number(*hv.value, h.unit);
      h.values.push_back(std::move(hv));
    }
    out.push_back(std::move(h));
  }
  return out;
}

Table headlines_table(const std::vector<Headline>& headlines, const std::vector<std::string>& builds) {
  Table t;
  t.columns.emplace_back("view");
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
