// report/scaling and report/headline on hand-made records: the numbers, the tables, the JSON export; and
// [[view]] in the experiment file (config/loader).
#include <catch2/catch.hpp>

#include "config/loader.hpp"
#include "helpers.hpp"
#include "report/charts.hpp"
#include "report/export.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/text.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

CaseInfo swept(const std::string& base, const std::string& key, std::int64_t n) {
  const std::string text = std::to_string(n);
  return CaseInfo{base + "[" + key + "=" + text + "]", "", base, {{key, text, n}}, {}};
}

RunRecord run(const std::string& case_name, const std::string& build, double wall_ms, int repeat, json result = nullptr) {
  RunRecord r = report_test::run_record("scale", case_name, build, wall_ms, repeat);
  if (!result.is_null()) {
    r.has_result = true;
    r.result = std::move(result);
  }
  return r;
}

// threads over workers 1, 2, 4 on a 2-core machine, on two builds; and two plain cases with results.
ReportModel scaling_model(std::vector<ViewSpec> views = {}) {
  MetaRecord meta;
  meta.experiment.name = "scale";
  meta.experiment.cases = {swept("threads", "workers", 1), swept("threads", "workers", 2), swept("threads", "workers", 4),
                           CaseInfo{"single", "", "single", {}, {}}, CaseInfo{"sharded", "", "sharded", {}, {}}};
  meta.experiment.views = std::move(views);
  meta.machine = MachineRecord{"vm", "6.1", "x86_64", "AMD EPYC", 2, 2, 0};
  LoadedResults file;
  file.path = "scale.jsonl";
  file.lines.emplace_back(meta);
  const double w1[] = {100, 100, 100}, w2_gil[] = {100, 98, 102}, w2_ft[] = {50, 50, 55}, w4_ft[] = {40, 40, 40};
  for (int k = 0; k < 3; ++k) {
    file.lines.emplace_back(run("threads[workers=1]", "3.13", w1[k], k));
    file.lines.emplace_back(run("threads[workers=2]", "3.13", w2_gil[k], k));
    file.lines.emplace_back(run("threads[workers=4]", "3.13", 100, k));
    file.lines.emplace_back(run("threads[workers=1]", "3.14t", w1[k], k));
    file.lines.emplace_back(run("threads[workers=2]", "3.14t", w2_ft[k], k));
    file.lines.emplace_back(run("threads[workers=4]", "3.14t", w4_ft[k], k));
    file.lines.emplace_back(run("single", "3.14t", 300, k, {{"lost", {{"pct", 10.0 + k}}}, {"rps", 1000}}));
    file.lines.emplace_back(run("sharded", "3.14t", 100, k, {{"rps", 2500}}));
    file.lines.emplace_back(run("single", "3.13", 300, k, {{"lost", {{"pct", 0}}}, {"rps", 1000}}));
  }
  return build_report_model(merge_results({file}), ReportOptions{});
}

const ScalingPoint& point(const Scaling& s, const std::string& build, std::int64_t n) {
  for (const auto& line : s.lines)
    if (line.build == build)
      for (const auto& p : line.points)
        if (p.n == n) return p;
  FAIL("no point " << build << " " << n);
  throw 0;
}

}  // namespace

TEST_CASE("scaling: speedup over the smallest N, paired by round; efficiency against min(N, cores)", "[report][views]") {
  const ReportModel m = scaling_model();
  REQUIRE(m.sections.size() == 1);
  const Section& s = m.sections[0];
  REQUIRE(s.scaling.size() == 1);  // single and sharded are not swept
  const Scaling& sc = s.scaling[0];
  CHECK(sc.title() == "threads over workers");
  CHECK(sc.counts == std::vector<std::int64_t>{1, 2, 4});
  CHECK(sc.cores == 2);
  REQUIRE(sc.lines.size() == 2);

  // 3.14t: 100/50, 100/50, 100/55 -> median 2.0; 4 workers: 2.5 against an ideal of 2 (2 cores).
  CHECK(point(sc, "3.14t", 1).speedup.value == Approx(1.0));
  CHECK(point(sc, "3.14t", 2).speedup.value == Approx(2.0));
  CHECK(point(sc, "3.14t", 2).speedup.paired);
  CHECK(point(sc, "3.14t", 2).ideal == Approx(2.0));
  // Efficiency from the speedup shown (Hodges-Lehmann of the ratios 2, 2, 1.82: 1.95).
  CHECK(*point(sc, "3.14t", 2).efficiency == Approx(0.9765).epsilon(0.001));
  CHECK(point(sc, "3.14t", 4).ideal == Approx(2.0));
  CHECK(point(sc, "3.14t", 4).speedup.value == Approx(2.5));
  CHECK(*point(sc, "3.14t", 4).efficiency == Approx(1.25));
  // 3.13: the GIL, no speedup: 100/100, 100/98, 100/102 -> 1.0, efficiency 50 % at 2 workers.
  CHECK(point(sc, "3.13", 2).speedup.value == Approx(1.0));
  CHECK(*point(sc, "3.13", 2).efficiency == Approx(0.5).epsilon(0.001));

  REQUIRE(sc.table.rows.size() == 2);
  CHECK(sc.table.columns[2].title == "workers=2 (cores)");
  // Three rounds give no 95 % interval: no speedup is claimed, however steady (report/evidence).
  CHECK(sc.table.rows[1] ==
        std::vector<std::string>{"3.14t", "1.00x", "1.95x? (1.82–2.00) n=3", "2.50x? (2.50–2.50) n=3"});
}

TEST_CASE("scaling: every format shows it; the JSON export holds the numbers", "[report][views]") {
  const ReportModel m = scaling_model();
  const std::string text = render_text(m);
  CHECK_THAT(text, Contains("scaling of threads over workers"));
  CHECK_THAT(text, Contains("2.50x? (2.50–2.50) n=3"));
  CHECK_THAT(render_markdown(m), Contains("### Scaling"));
  const std::string html = render_html(m);
  CHECK(report_test::count(html, "<svg class=\"scaling\"") == 1);
  CHECK(report_test::count(html, "<polyline class=\"speedup\"") == 2);
  CHECK(report_test::count(html, "<polyline class=\"ideal\"") == 1);
  CHECK(report_test::count(html, "<line class=\"cores\"") == 1);
  CHECK(report_test::count(html, "<svg class=\"parallelism\"") == 1);

  const json j = summary_json(m)["experiments"][0]["scaling"];
  REQUIRE(j.size() == 1);
  CHECK(j[0]["key"] == "workers");
  CHECK(j[0]["cores"] == 2);
  const json& ft = j[0]["builds"][1];
  CHECK(ft["build"] == "3.14t");
  CHECK(ft["points"][2]["n"] == 4);
  CHECK(ft["points"][2]["speedup"]["value"].get<double>() == Approx(2.5));
  CHECK(ft["points"][2]["efficiency"].get<double>() == Approx(1.25));
}

TEST_CASE("views: a ratio of two cases and a number from the result, per build, beside the article", "[report][views]") {
  ViewSpec wall{"sharded vs single", ViewKind::ratio, "single", "sharded", "", "", 3.1};
  ViewSpec rps{"rps sharded / single", ViewKind::ratio, "sharded", "single", "rps", "", std::nullopt};
  ViewSpec lost{"lost updates", ViewKind::value, "single", "", "lost.pct", "%", 12.0};
  const ReportModel m = scaling_model({wall, rps, lost});
  const Section& s = m.sections[0];
  REQUIRE(s.headlines.size() == 3);
  // Builds in the section's order: 3.13, 3.14t. sharded never ran on 3.13.
  CHECK_FALSE(s.headlines[0].values[0].value);
  CHECK(*s.headlines[0].values[1].value == Approx(3.0));
  CHECK(s.headlines[0].values[1].text == "3.00x? (3.00–3.00) n=3");  // 3 rounds: no 95 % interval
  CHECK_FALSE(s.headlines[0].values[1].supported);
  CHECK(s.headlines[0].article_text == "3.10x");
  CHECK(*s.headlines[1].values[1].value == Approx(2.5));
  CHECK(*s.headlines[2].values[0].value == Approx(0));
  CHECK(*s.headlines[2].values[1].value == Approx(11));  // median of 10, 11, 12
  CHECK(s.headlines[2].values[1].text == "11 % (10–12) n=3");
  CHECK(s.headlines_table.rows[2] == std::vector<std::string>{"lost updates", "0 % (0–0) n=3", "11 % (10–12) n=3", "12 %"});

  CHECK_THAT(render_text(m), Contains("lost updates"));
  const std::string html = render_html(m);
  CHECK(report_test::count(html, "<svg class=\"view\"") == 3);
  CHECK(report_test::count(html, "<rect class=\"viewbar") == 4);  // sharded never ran on 3.13
  CHECK(report_test::count(html, "<rect class=\"viewbar noclaim\"") == 2);  // both ratios of 3 rounds claim nothing
  CHECK(report_test::count(html, "<line class=\"article\"") == 2);

  const json views = summary_json(m)["experiments"][0]["views"];
  REQUIRE(views.size() == 3);
  CHECK(views[0]["kind"] == "ratio");
  CHECK(views[0]["article"].get<double>() == Approx(3.1));
  CHECK(views[0]["values"][0]["value"].is_null());
  CHECK(views[2]["key"] == "lost.pct");
  CHECK(views[2]["values"][1]["value"].get<double>() == Approx(11));
  CHECK(views[2]["values"][1]["n"] == 3);
  CHECK(views[2]["values"][1]["ci95"].is_null());
  CHECK(views[2]["values"][1]["ci"]["level"].get<double>() == Approx(0.75));
  CHECK(views[2]["values"][1]["ci"]["lo"].get<double>() == Approx(10));
}

TEST_CASE("views: a ratio that claims nothing is drawn hollow; a single run's value does not set the axis",
          "[report][views]") {
  Headline h;
  h.spec = ViewSpec{"convoy", ViewKind::ratio, "locked", "free", "", "", std::nullopt};
  h.unit = "x";
  // One run of a slow case: 150x, no interval, no direction. Beside it a steady 2x of 6 rounds, and a 2.4x
  // of 3 rounds (a 75 % interval: no direction claimed, but its spread is known).
  h.values.push_back({"3.9", 150.0, Estimate{1, 150.0, std::nullopt}, false, "150x? n=1"});
  h.values.push_back({"3.12", 2.0, Estimate{6, 2.0, Interval{1.8, 2.2, 0.95}}, true, "2.00x (1.80–2.20) n=6"});
  h.values.push_back({"3.13", 2.4, Estimate{3, 2.4, Interval{2.0, 2.9, 0.75}}, false, "2.40x? (2.00–2.90) n=3"});
  const std::string svg = headline_svg(Section{}, h);
  CHECK(report_test::count(svg, "<rect class=\"viewbar noclaim\"") == 2);
  CHECK(report_test::count(svg, "<rect class=\"viewbar\"") == 1);
  CHECK(report_test::count(svg, "<path class=\"whisker\"") == 2);
  CHECK_THAT(svg, Contains(">» 150x? n=1</text>"));
  CHECK_THAT(svg, Contains(">2.00x (1.80–2.20) n=6</text>"));
  CHECK_THAT(svg, Contains(">2.40x? (2.00–2.90) n=3</text>"));
  CHECK_THAT(svg, Contains("Outlined: no direction claimed") && Contains("» marks one past it"));
  // The axis is the measured spreads': its ticks stop at 2.5, nowhere near 150.
  CHECK_THAT(svg, Contains(">2.5</text>"));
  CHECK_THAT(svg, !Contains(">50</text>") && !Contains(">100</text>") && !Contains(">150</text>"));

  // Where no value's spread is known, the single runs set the axis themselves (and none is past it).
  h.values[1].estimate->interval.reset();
  h.values[2].estimate->interval.reset();
  const std::string no_spread = headline_svg(Section{}, h);
  CHECK_THAT(no_spread, Contains(">150</text>"));
  CHECK_THAT(no_spread, !Contains("»"));
  CHECK_THAT(no_spread, !Contains("past it"));
  CHECK(report_test::count(no_spread, "<path class=\"whisker\"") == 0);
}

TEST_CASE("views: a huge value is written in three digits, and a long label does not widen its chart past 40 characters",
          "[report][views]") {
  CHECK(headline_number(1e308, "") == "1e+308");
  CHECK(headline_number(1e308, "%") == "1e+308 %");
  CHECK(headline_number(123456, "rps") == "123456 rps");
  Headline h;
  h.spec = ViewSpec{"x", ViewKind::value, "a", "", "x", "", std::nullopt};
  h.values.push_back({"3.12", 1e308, Estimate{2, 1e308, Interval{1e308, 1e308, 0.5}}, true, std::string(600, '9')});
  const std::string svg = headline_svg(Section{}, h);
  // 150 px of labels, 366 of plot, and room for 40 characters at most.
  CHECK_THAT(svg, Contains("width=\"780\""));
  for (const char* not_a_number : {"\"inf", "\"nan", "Minf", "Hinf"}) CHECK_THAT(svg, !Contains(not_a_number));
  CHECK_THAT(svg, Contains("<rect class=\"viewbar\" x=\"150.0\" y=\"22.0\" width=\"366.0\""));
}

namespace {

struct ViewSandbox {
  gilhost_test::TempDir dir;
  std::string path;
  ViewSandbox() : path((dir / "exp.toml").string()) { gilhost_test::write_file(dir / "s.py", "def run(**kw):\n    return kw\n"); }
  std::string head() const {
    return "[experiment]\nscript = \"s.py\"\n[[case]]\nname = \"one\"\ncall = \"run\"\n"
           "[[case]]\nname = \"many\"\ncall = \"run\"\nsweep = { workers = [1, 2] }\n";
  }
  std::vector<ConfigError> errors(const std::string& text) const {
    try {
      load_experiment_text(text, path, "");
    } catch (const ConfigErrors& e) {
      return e.errors();
    }
    return {};
  }
};

}  // namespace

TEST_CASE("loader: [[view]] is read, typed and recorded", "[config][loader][views]") {
  ViewSandbox sb;
  const Experiment ex = load_experiment_text(sb.head() + R"(
[[view]]
title = "two workers / one"
kind = "ratio"
a = "many[workers=2]"
b = "many[workers=1]"
article = 1.9

[[view]]
kind = "value"
a = "one"
key = "lost.pct"
unit = "%"
)",
                                             sb.path, "");
  REQUIRE(ex.views.size() == 2);
  CHECK(ex.views[0].kind == ViewKind::ratio);
  CHECK(ex.views[0].a == "many[workers=2]");
  CHECK(ex.views[0].b == "many[workers=1]");
  CHECK(ex.views[0].key.empty());
  CHECK(*ex.views[0].article == Approx(1.9));
  CHECK(ex.views[1].kind == ViewKind::value);
  CHECK(ex.views[1].title == "one lost.pct");  // a title by default
  CHECK_FALSE(ex.views[1].article);
  const json j = ex.to_json()["views"];
  REQUIRE(j.size() == 2);
  CHECK(j[0]["article"].get<double>() == Approx(1.9));
  CHECK(j[1]["unit"] == "%");
}

TEST_CASE("loader: [[view]] errors are located at file:line:column", "[config][loader][views][errors]") {
  ViewSandbox sb;
  const int first = 10;  // the [[view]] line, after head()'s 9
  auto errors = sb.errors(sb.head() + "[[view]]\nkind = \"ratio\"\na = \"nope\"\nb = \"many\"\n");
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].message == "view names unknown case 'nope'");
  CHECK(errors[0].where.str() == sb.path + ":" + std::to_string(first + 2) + ":5");
  CHECK_THAT(errors[1].message, Contains("'many' is swept") && Contains("many[workers=1]"));
  CHECK(errors[1].where.line == first + 3);

  errors = sb.errors(sb.head() + "[[view]]\nkind = \"bar\"\na = \"one\"\nkey = \"k\"\n");
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0].message, Contains("kind = \"ratio\", \"value\" or \"gil_wait\""));
  CHECK(errors[0].where.line == first + 1);

  errors = sb.errors(sb.head() + "[[view]]\nkind = \"value\"\na = \"one\"\narticle = \"3x\"\ncolour = 1\n");
  REQUIRE(errors.size() == 3);  // the unknown key, no key, article not a number
  CHECK_THAT(errors[0].message, Contains("unknown key 'colour'"));

  errors = sb.errors("view = 3\n" + sb.head());
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0].message, Contains("[[view]]"));
}

TEST_CASE("chart labels: themselves, or cut to the room with an ellipsis at a character boundary", "[report][charts]") {
  CHECK(gilhost::chart_label("3.14.7t", 18) == "3.14.7t");
  CHECK(gilhost::chart_label("3.14.7t (/opt/python/bin/python3)", 18) == "3.14.7t (/opt/pyt…");
  // 17 bytes would end inside "é": the cut steps back to the character before it.
  CHECK(gilhost::chart_label("3.14.7t (/opt/pyé/bin/python3)", 18) == "3.14.7t (/opt/py…");
}
