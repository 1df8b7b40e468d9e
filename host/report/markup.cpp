#include "report/markup.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/strings.hpp"

namespace gilhost {

std::string render_views(const Section& s, const Markup& m) {
  std::string out;
  if (!s.headlines.empty()) {
    out += m.heading("Headline views") + m.table(s.headlines_table, "views");
    std::vector<std::string> items;
    for (const auto& h : s.headlines) items.push_back(m.strong(m.escape(h.spec.title)) + ": " + m.escape(h.how));
    out += m.list(items, "views-how");
    std::string charts;
    for (const auto& h : s.headlines) charts += m.headline_chart(s, h);
    out += charts;
  }
  if (!s.metrics_table.empty()) {
    out += m.heading("Metrics") +
           m.paragraph(m.escape("The scripts' own figures (gilhost.metric, [case.extract]): median of the ok runs ± MAD."),
                       "muted") +
           m.table(s.metrics_table, "metrics");
    std::vector<std::string> items;
    for (const auto& source : s.metric_sources) items.push_back(m.escape(source));
    if (!items.empty()) out += m.list(items, "metric-sources");
  }
  if (!s.scaling.empty()) {
    out += m.heading("Scaling");
    for (const auto& sc : s.scaling)
      out += m.paragraph(m.strong(m.escape(sc.title())) + " — " + m.escape(scaling_caption(sc)), "muted") +
             m.scaling_chart(s, sc) + m.table(sc.table, "scaling");
  }
  return out;
}

std::string render_details(const Section& s, const Markup& m) {
  if (!s.details || s.summary.cells.empty()) return "";
  std::string out = m.heading("Details") + m.table(s.details_table, "details");
  if (!s.summary.baseline.empty())
    out += m.paragraph(m.escape("ratio: wall / wall of ") + m.quote(s.summary.baseline) +
                           m.escape(" on the same build, paired by round (Hodges-Lehmann, its interval; "
                                    "\"no diff.\": no measurable difference, the 95 % interval holds 1; \"x?\": too few runs for a 95 % interval (one run: none), no direction stated)."),
                       "muted");
  return out;
}

std::string render_readings(const Section& s, const Markup& m) {
  if (s.readings.empty()) return "";
  std::vector<std::string> items;
  for (const auto& r : s.readings) items.push_back(m.strong(m.escape(r.case_name)) + " @ " + m.escape(r.build) + ": " + m.escape(r.text));
  return m.heading("Readings") +
         m.paragraph(m.escape("What the thread states say: the median share of the Python threads' time in each state, "
                              "over the cell's runs."),
                     "muted") +
         m.list(items, "readings");
}

std::string render_expectations(const Section& s, const Markup& m) {
  if (s.failures.empty()) {
    const auto& cells = s.summary.cells;
    const bool any_set = std::any_of(cells.begin(), cells.end(), [](const auto& kv) { return checks_expectations(kv.second); });
    return any_set ? m.paragraph(m.all_held_mark() + "Every expectation held.") : "";
  }
  std::vector<std::string> items;
  for (const auto& f : s.failures)
    items.push_back(m.verdict(false) + " " + m.strong(m.escape(f.case_name)) + " @ " + m.escape(f.build) +
                    fmt::format(" ({} of {} runs): ", f.failed_runs, f.runs) + m.escape(f.failure));
  return m.heading("Expectations not met") + m.list(items, "failures");
}

std::string render_skips(const Section& s, const Markup& m) {
  if (s.skip_groups.empty()) return "";
  std::vector<std::string> items;
  for (const auto& g : s.skip_groups)
    items.push_back((g.cases.empty() ? "" : m.escape(join(g.cases, ", ")) + " @ ") + m.escape(join(g.builds, ", ")) + ": " +
                    m.escape(g.reason));
  return m.heading("Skipped") + m.list(items, "skips");
}

std::string render_article(const Section& s, const Markup& m) {
  return s.article_table.empty() ? "" : m.heading("The article reported") + m.table(s.article_table, "article");
}

std::string render_evidence(const Section& s, const Markup& m) {
  std::string out;
  auto group = [&](const std::vector<std::string>& lines, const std::string& title, const std::string& css) {
    if (lines.empty()) return;
    std::vector<std::string> items;
    for (const auto& line : lines) items.push_back(m.escape(line));
    out += m.heading(title) + m.list(items, css);
  };
  group(s.unstable, "Unstable cells (!)", "unstable");
  group(s.gil_unknown, "GIL wait unknown (?)", "gil-unknown");
  group(s.precision_notes, "Short of the precision target", "precision");
  return out;
}

std::string render_findings(const Section& s, const Markup& m) {
  std::string out = render_details(s, m) + render_readings(s, m) + render_evidence(s, m) + render_expectations(s, m) +
                    render_skips(s, m) + render_article(s, m);
  for (const auto& n : s.notes) out += m.note(n);
  return out;
}

}  // namespace gilhost
