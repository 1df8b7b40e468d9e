// merge (labels kept distinct across machines), compare (B / A per cell), --baseline-python ratios.
#include <catch2/catch.hpp>

#include <set>

#include "helpers.hpp"
#include "report/compare.hpp"
#include "report/export.hpp"
#include "report/markdown.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/text.hpp"
#include "results/record_json.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using report_test::fixture;
using report_test::on_host;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

std::set<std::string> run_labels(const std::vector<ResultsLine>& lines) {
  std::set<std::string> out;
  for (const auto& line : lines)
    if (const auto* r = std::get_if<RunRecord>(&line)) out.insert(r->interpreter);
  return out;
}

// The lines as the results file holds them.
std::vector<json> as_json(const std::vector<ResultsLine>& lines) {
  std::vector<json> out;
  for (const auto& line : lines) out.push_back(to_json(line));
  return out;
}

RunRecord run(double wall_ms, int repeat, const std::string& source = "f", int session = 0) {
  RunRecord r;
  r.repeat = repeat;
  r.wall_ns = static_cast<std::int64_t>(wall_ms * 1e6);
  r.origin.source = source;
  r.origin.session = session;
  return r;
}

}  // namespace

TEST_CASE("merge tags every record with its host, file and session", "[report][merge]") {
  MergedResults m = merge_files({fixture("report_demo.jsonl")});
  REQUIRE(m.sources == std::vector<std::string>{fixture("report_demo.jsonl")});
  int metas = 0, runs = 0, skips = 0;
  for (const auto& j : as_json(m.lines)) {
    const std::string t = j["type"];
    metas += t == "meta";
    runs += t == "run";
    skips += t == "skip";
    CHECK(j["source"] == fixture("report_demo.jsonl"));
    CHECK(j["session"] == 0);
    if (t != "meta") CHECK(j["host"] == "vm");
  }
  CHECK(metas == 1);
  CHECK(runs == 42);
  CHECK(skips == 2);
  CHECK(m.relabeled.empty());  // one machine: labels stay as they are
  CHECK(run_labels(m.lines) == std::set<std::string>{"3.9.18", "3.12.1", "3.13.0"});
}

TEST_CASE("merge makes labels distinct only where two hosts share them", "[report][merge]") {
  auto a = load_results_ordered(fixture("report_race_a.jsonl"));
  auto b = on_host(load_results_ordered(fixture("report_race_b.jsonl")), "host-b");
  MergedResults m = merge_results({a, b});
  CHECK(run_labels(m.lines) == std::set<std::string>{"3.9.18@vm", "3.12.1@vm", "3.13.0@vm", "3.9.18@host-b",
                                                      "3.12.1@host-b", "3.13.0@host-b"});
  CHECK(m.relabeled.size() == 6);
  for (const auto& j : as_json(m.lines)) {
    if (j["type"] == "run") {
      CHECK(j["original_interpreter"] == strip_host_tag(j["interpreter"], j["host"]));
      CHECK(j["source"] == (j["host"] == "vm" ? fixture("report_race_a.jsonl") : fixture("report_race_b.jsonl")));
    }
    if (j["type"] == "meta")
      for (const auto& i : j["interpreters"]) CHECK(i["label"] == i["original_label"].get<std::string>() + "@" + j["machine"]["hostname"].get<std::string>());
  }

  SECTION("a label only one host has stays as it is") {
    auto c = on_host(load_results_ordered(fixture("report_demo.jsonl")), "host-c");
    for (auto& line : c.lines)
      if (auto* r = std::get_if<RunRecord>(&line); r && r->interpreter == "3.13.0") r->interpreter = "3.13.0t";
    MergedResults m2 = merge_results({a, c});
    auto labels = run_labels(m2.lines);
    CHECK(labels.count("3.13.0t"));    // host-c alone
    CHECK(labels.count("3.13.0@vm"));  // also in host-c's meta interpreter list: tagged on both
    CHECK(labels.count("3.9.18@host-c"));
  }
  SECTION("merging the merged file again changes nothing") {
    LoadedResults again;
    again.path = "merged.jsonl";
    for (const auto& line : m.lines) again.lines.push_back(line_from_json(json::parse(to_json(line).dump())));
    MergedResults m2 = merge_results({again});
    CHECK(m2.relabeled.empty());
    CHECK(run_labels(m2.lines) == run_labels(m.lines));
    CHECK(as_json(m2.lines) == as_json(m.lines));  // tags kept, not re-sourced
  }
  SECTION("the same host twice: labels stay, runs pool") {
    MergedResults same = merge_results({a, load_results_ordered(fixture("report_race_b.jsonl"))});
    CHECK(same.relabeled.empty());
    ReportModel model = build_report_model(same, {});
    REQUIRE(model.sections.size() == 1);
    CHECK(model.sections[0].summary.cell("plain", "3.12.1")->runs.size() == 6);
    CHECK(model.sections[0].machines.size() == 1);
  }
}

TEST_CASE("merge --tag host, file and none", "[report][merge]") {
  auto a = load_results_ordered(fixture("report_race_a.jsonl"));
  MergeOptions o;
  o.tag = "host";
  CHECK(run_labels(merge_results({a}, o).lines) == std::set<std::string>{"3.9.18@vm", "3.12.1@vm", "3.13.0@vm"});
  o.tag = "file";
  CHECK(run_labels(merge_results({a}, o).lines).count("3.12.1@report_race_a"));
  o.tag = "none";
  auto b = on_host(load_results_ordered(fixture("report_race_b.jsonl")), "host-b");
  CHECK(run_labels(merge_results({a, b}, o).lines) == std::set<std::string>{"3.9.18", "3.12.1", "3.13.0"});
  o.tag = "bogus";
  CHECK_THROWS_AS(merge_results({a}, o), std::invalid_argument);
  CHECK(strip_host_tag("3.12.1@host-a", "host-a") == "3.12.1");
  CHECK(strip_host_tag("3.12.1", "host-a") == "3.12.1");
}

TEST_CASE("a merged file renders one cross-machine report", "[report][merge]") {
  MergedResults m = merge_results({load_results_ordered(fixture("report_race_a.jsonl")),
                                   on_host(load_results_ordered(fixture("report_race_b.jsonl")), "host-b")});
  ReportOptions o;
  o.baseline_python = "3.12";
  ReportModel model = build_report_model(m, o);
  REQUIRE(model.sections.size() == 1);
  const Section& s = model.sections[0];
  CHECK(s.machines.size() == 2);
  CHECK(s.multi_host());
  CHECK(s.summary.interpreters.size() == 6);
  REQUIRE(s.build("3.9.18@host-b"));
  CHECK(s.build("3.9.18@host-b")->host == "host-b");
  CHECK(s.build("3.9.18@host-b")->original_label == "3.9.18");
  // Each build is compared with the baseline build of its own machine.
  CHECK(s.baseline_of.at("3.9.18@host-b") == "3.12.1@host-b");
  CHECK(s.baseline_of.at("3.13.0@vm") == "3.12.1@vm");
  const std::string text = render_text(model);
  CHECK(text.find("machines:\n  vm: AMD EPYC") != std::string::npos);
  CHECK(text.find("  host-b: ") != std::string::npos);
  // Which columns share a machine, in the machines table (every format) and a note.
  CHECK(text.find("— 3.9.18@host-b, 3.12.1@host-b, 3.13.0@host-b\n") != std::string::npos);
  CHECK(s.machines_table.rows.at(0).back() == "3.9.18@vm, 3.12.1@vm, 3.13.0@vm");
  REQUIRE_FALSE(s.notes.empty());
  CHECK(s.notes[0].find("these columns come from 2 machines: 3.9.18@vm, 3.12.1@vm, 3.13.0@vm on vm; "
                        "3.9.18@host-b, 3.12.1@host-b, 3.13.0@host-b on host-b") == 0);
  CHECK(render_markdown(model).find("3.9.18@vm, 3.12.1@vm, 3.13.0@vm on vm") != std::string::npos);
  // Each build had its own machine's baseline: no ratio divides across machines.
  for (const auto& n : s.notes) CHECK(n.find("another machine") == std::string::npos);

  SECTION("a baseline only one machine has: the ratios across machines say so") {
    o.baseline_python = "3.12.1@vm";
    const ReportModel across = build_report_model(m, o);
    const Section& a = across.sections[0];
    CHECK(a.baseline_of.at("3.9.18@host-b") == "3.12.1@vm");
    bool said = false;
    for (const auto& n : a.notes)
      said = said || n.find("vs 3.12.1@vm of 3.9.18@host-b, 3.12.1@host-b, 3.13.0@host-b divides by a run on another machine (vm)") == 0;
    CHECK(said);
  }
}

TEST_CASE("one machine: no machines note", "[report][merge]") {
  const ReportModel model = build_report_model(merge_results({load_results_ordered(fixture("report_race_a.jsonl"))}), {});
  REQUIRE(model.sections.size() == 1);
  CHECK_FALSE(model.sections[0].multi_host());
  for (const auto& n : model.sections[0].notes) CHECK(n.find("machines") == std::string::npos);
}

TEST_CASE("wall ratios pair runs by repeat, within a session first", "[report][compare]") {
  SECTION("paired") {
    RatioStat r = wall_ratio({run(200, 0), run(220, 1), run(240, 2)}, {run(100, 0), run(100, 1), run(120, 2)});
    REQUIRE(r.valid());
    CHECK(r.paired);
    CHECK(r.pairs == 3);
    CHECK(r.value == Approx(2.0));
    CHECK(r.lo == Approx(2.0));
    CHECK(r.hi == Approx(2.2));
    CHECK(r.mad == Approx(0.0));
    // Three pairs: the range at 75 %, no 95 % interval, so no direction is claimed.
    CHECK(r.estimate.n == 3);
    CHECK(format_ratio(r) == "2.05x? (2.00–2.20) n=3");
    CHECK(format_change(r) == "no measurable difference (2.00–2.20, n=3)");
    // Six pairs all about 2x: slower, with the interval.
    RatioStat six = wall_ratio({run(200, 0), run(220, 1), run(240, 2), run(210, 3), run(200, 4), run(230, 5)},
                               {run(100, 0), run(100, 1), run(120, 2), run(100, 3), run(100, 4), run(110, 5)});
    CHECK_THAT(format_change(six), Contains("x slower (2.00–2.20, n=6)"));
    CHECK_THAT(format_ratio(six), Contains("x (2.00–2.20)"));
  }
  SECTION("the same session wins over the same repeat index elsewhere") {
    RatioStat r = wall_ratio({run(200, 0, "a", 0)}, {run(50, 0, "b", 0), run(100, 0, "a", 0)});
    CHECK(r.value == Approx(2.0));
    CHECK(format_ratio(r) == "2.00x? n=1");
    CHECK(format_change(r) == "2.00x? (one pair, no interval: n=1)");
  }
  SECTION("no repeat index in common: the ratio of the medians, and the range of all pairs") {
    RatioStat r = wall_ratio({run(100, 5), run(300, 6), run(200, 7)}, {run(100, 0), run(50, 1)});
    CHECK_FALSE(r.paired);
    CHECK(r.pairs == 6);
    CHECK(r.value == Approx(200.0 / 75.0));
    CHECK(r.lo == Approx(1.0));
    CHECK(r.hi == Approx(6.0));
    CHECK(r.estimate.n == 2);
    CHECK_THAT(format_change(r), Contains("no measurable difference ("));
  }
  SECTION("faster, same, and runs that do not count") {
    RatioStat f = wall_ratio({run(50, 0), run(50, 1)}, {run(100, 0), run(100, 1)});
    CHECK(format_change(f) == "no measurable difference (0.50–0.50, n=2)");
    RatioStat faster = wall_ratio({run(50, 0), run(50, 1), run(50, 2), run(50, 3), run(50, 4), run(50, 5)},
                                  {run(100, 0), run(100, 1), run(100, 2), run(100, 3), run(100, 4), run(100, 5)});
    CHECK(format_change(faster) == "2.00x faster (2.00–2.00, n=6)");
    RatioStat same = wall_ratio({run(100, 0)}, {run(100, 0)});
    CHECK(format_change(same) == "1.00x? (one pair, no interval: n=1)");
    RunRecord err = run(10, 0);
    err.status = RunStatus::error;
    RunRecord warm = run(10, 0);
    warm.warmup = true;
    CHECK_FALSE(wall_ratio({err, warm}, {run(100, 0)}).valid());
    CHECK(format_change(wall_ratio({}, {run(1, 0)})) == "-");
  }
}

TEST_CASE("compare matches cells and marks ratios beyond the threshold", "[report][compare]") {
  auto a = merge_files({fixture("report_race_a.jsonl")}).lines;
  auto b = merge_files({fixture("report_race_b.jsonl")}).lines;
  CompareOptions o;
  Comparison c = compare_runs(a, b, o);
  REQUIRE(c.rows.size() == 9);
  CHECK(c.only_a.empty());
  CHECK(c.only_b.empty());
  int flagged = 0;
  for (const auto& r : c.rows) {
    CHECK_FALSE(r.ratio.paired);  // two files' runs were not made side by side
    CHECK(r.ratio.estimate.n == 3);
    CHECK(r.label_a == r.label_b);
    const double factor = std::max(r.ratio.estimate.point, 1 / r.ratio.estimate.point);
    CHECK(r.beyond_threshold == (factor > 1.10));
    CHECK(r.wall_b.median / r.wall_a.median == Approx(r.ratio.value).epsilon(0.5));
    // 3 runs a side: the rank-sum test cannot reach p < 0.05, so no cell has changed, whatever its ratio.
    CHECK(r.verdict == Verdict::too_few_runs);
    flagged += r.beyond_threshold;
  }
  CHECK(flagged > 0);
  CHECK(c.beyond_threshold() == flagged);
  CHECK(c.changed() == 0);
  o.threshold_pct = 1000;
  CHECK(compare_runs(a, b, o).beyond_threshold() == 0);

  SECTION("a file against itself: every ratio is 1") {
    Comparison self = compare_runs(a, a, {});
    for (const auto& r : self.rows) {
      CHECK(r.ratio.value == Approx(1.0));
      CHECK_THAT(format_change(r.ratio), Contains("no measurable difference"));
    }
    CHECK(self.beyond_threshold() == 0);
    CHECK(self.changed() == 0);
    CHECK_FALSE(self.different_sessions());
  }
  SECTION("labels that differ match --by python or --by minor") {
    auto renamed = b;
    for (auto& line : renamed)
      if (auto* r = std::get_if<RunRecord>(&line)) r->interpreter = "other-" + r->interpreter;
    Comparison by_label = compare_runs(a, renamed, {});
    CHECK(by_label.rows.empty());
    CHECK(by_label.only_a.size() == 9);
    CHECK(by_label.only_b.size() == 9);
    CompareOptions py;
    py.by = "python";
    Comparison by_python = compare_runs(a, renamed, py);
    REQUIRE(by_python.rows.size() == 9);
    CHECK(by_python.rows[0].label_b == "other-" + by_python.rows[0].label_a);
    py.by = "minor";
    CHECK(compare_runs(a, renamed, py).rows.size() == 9);
    py.by = "nonsense";
    CHECK_THROWS_AS(compare_runs(a, renamed, py), std::invalid_argument);
  }
  SECTION("rendered") {
    c.path_a = "a.jsonl";
    c.path_b = "b.jsonl";
    const std::string text = render_comparison_text(c);
    CHECK(text.find("A: a.jsonl — vm: AMD EPYC, 2 cores") != std::string::npos);
    CHECK(text.find("9 cells compared") != std::string::npos);
    // 3 runs a side: no 95 % interval, so no cell reads slower or faster.
    CHECK(text.find("no measurable difference") != std::string::npos);
    CHECK(text.find("x slower") == std::string::npos);
    const std::string md = render_comparison_markdown(c);
    CHECK(md.find("| experiment | case | build | A wall | B wall | B / A | p | verdict |") != std::string::npos);
    CHECK(md.find("too few runs to tell (3 a side; 4+ needed)") != std::string::npos);
    json j = comparison_json(c);
    CHECK(j["rows"].size() == 9);
    CHECK(j["rows"][0]["ratio_b_over_a"]["pairs"] == 9);
    CHECK(j["rows"][0]["ratio_b_over_a"]["n"] == 3);
    CHECK(j["rows"][0]["ratio_b_over_a"]["direction"] == "no_difference");
    CHECK(j["flagged"] == c.changed());
    CHECK(j["rows"][0]["verdict"] == "too_few_runs");
  }
}

TEST_CASE("match keys", "[report][compare]") {
  RunRecord r;
  r.interpreter = "3.13.0t (/opt/py)";
  r.python = "3.13.0";
  r.free_threaded = true;
  CHECK(match_key(r, "label") == "3.13.0t (/opt/py)");
  CHECK(match_key(r, "python") == "3.13.0t");
  CHECK(match_key(r, "minor") == "3.13t");
  r.free_threaded = false;
  CHECK(match_key(r, "minor") == "3.13");
  // The same build with its GIL forced on is another build to compare.
  RunRecord forced;
  forced.interpreter = "3.14.7t+gil";
  forced.python = "3.14.7";
  forced.free_threaded = true;
  forced.gil_forced = true;
  CHECK(match_key(forced, "python") == "3.14.7t+gil");
  CHECK(match_key(forced, "minor") == "3.14t+gil");
}

TEST_CASE("baseline python: 3.14t and 3.14t+gil name different builds", "[report][baseline]") {
  auto build = [](const std::string& label, bool forced) {
    return json{{"label", label}, {"version", "3.14.7"}, {"free_threaded", true}, {"gil_forced", forced}};
  };
  auto run_on = [](const std::string& label, bool forced, double wall_s) {
    return json{{"type", "run"}, {"experiment", "x"}, {"case", "work"}, {"interpreter", label}, {"python", "3.14.7"},
                {"free_threaded", true}, {"gil_forced", forced}, {"repeat", 0}, {"warmup", false}, {"status", "ok"},
                {"wall_ns", static_cast<std::int64_t>(wall_s * 1e9)}};
  };
  MergedResults merged;
  for (const json& j : {json{{"type", "meta"},
                             {"format", kResultsFormat},
                             {"experiment", {{"name", "x"}}},
                             {"interpreters", {build("3.14.7t+gil", true), build("3.14.7t", false)}}},
                        run_on("3.14.7t+gil", true, 2.0), run_on("3.14.7t", false, 1.0)})
    merged.lines.push_back(line_from_json(j));
  auto baseline_of = [&](const std::string& selector) {
    ReportOptions o;
    o.baseline_python = selector;
    return build_report_model(merged, o).sections.at(0).baseline_of;
  };
  CHECK(baseline_of("3.14t").at("3.14.7t+gil") == "3.14.7t");
  CHECK(baseline_of("3.14t+gil").at("3.14.7t") == "3.14.7t+gil");
  CHECK(baseline_of("3.14.7t+gil").at("3.14.7t") == "3.14.7t+gil");  // the label itself
}

TEST_CASE("baseline python: each cell against the baseline build, pair by pair", "[report][baseline]") {
  ReportModel model = report_test::demo_model("3.12");
  REQUIRE(model.sections.size() == 1);
  const Section& s = model.sections[0];
  CHECK(s.notes.size() == 3);  // only the demo's leftover processes (spawn on each build), nothing of the baseline
  CHECK(s.baseline_of.at("3.9.18") == "3.12.1");
  CHECK(s.baseline_of.at("3.12.1") == "3.12.1");
  const Cell* work13 = s.summary.cell("work", "3.13.0");
  const Cell* work12 = s.summary.cell("work", "3.12.1");
  REQUIRE(work13);
  REQUIRE(work12);
  RatioStat expected = wall_ratio(work13->runs, work12->runs);
  REQUIRE(s.vs_baseline.count({"work", "3.13.0"}));
  CHECK(s.vs_baseline.at({"work", "3.13.0"}).value == Approx(expected.value));
  CHECK(s.vs_baseline.at({"work", "3.13.0"}).pairs == 3);
  CHECK(vs_baseline_text(s, "work", "3.12.1") == "base");
  CHECK(vs_baseline_text(s, "fail", "3.13.0") == "-");  // errors have no ok run to compare
  CHECK(vs_baseline_text(s, "work", "3.13.0") == format_ratio(expected));
  // The baseline build by its exact label, and a spec that names nothing.
  CHECK(report_test::demo_model("3.12.1").sections[0].baseline_of.at("3.9.18") == "3.12.1");
  CHECK(report_test::demo_model(">=3.10").sections[0].baseline_of.at("3.9.18") == "3.13.0");  // the newest match
  ReportModel none = report_test::demo_model("3.14t");
  CHECK(none.sections[0].baseline_of.empty());
  REQUIRE(none.sections[0].notes.size() == 4);  // and the three of leftover processes
  CHECK(none.sections[0].notes[0].find("no build of report_demo matches --baseline-python 3.14t") != std::string::npos);
  CHECK_THROWS_AS(report_test::demo_model("banana"), std::invalid_argument);

  const std::string text = render_text(model);
  CHECK(text.find("vs 3.12    3.9.18") != std::string::npos);
}

TEST_CASE("the text report of one file is the report as before", "[report]") {
  ReportModel model = report_test::demo_model();
  REQUIRE(model.sections.size() == 1);
  const Section& s = model.sections[0];
  // tests/fixtures/report_demo.txt: `gilhost report` of the file before the report model was typed.
  std::string before = gilhost_test::slurp(fixture("report_demo.txt"));
  before.replace(before.find("@RESULTS@"), 9, fixture("report_demo.jsonl"));
  CHECK(render_text(model) == before);

  // `gilhost run` reports its session's records through the same model: the same text.
  LoadedResults file = load_results_ordered(fixture("report_demo.jsonl"));
  MetaRecord meta;
  std::vector<SkipRecord> skips;
  std::vector<RunRecord> runs;
  for (const auto& line : file.lines) {
    if (const auto* m = std::get_if<MetaRecord>(&line)) meta = *m;
    if (const auto* k = std::get_if<SkipRecord>(&line)) skips.push_back(*k);
    if (const auto* r = std::get_if<RunRecord>(&line)) runs.push_back(*r);
  }
  CHECK(render_text(build_session_report(fixture("report_demo.jsonl"), meta, skips, runs, {})) == before);
  CHECK(model.expectation_failures() == 3);
  CHECK(s.summary.cases == std::vector<std::string>{"work", "spawn", "fail", "wrong", "subinterp"});
  CHECK(s.summary.expectation_failures == 3);
  CHECK(s.builds.size() == 3);
  CHECK(s.builds[0].compiler == "gcc");
  CHECK(s.profile().empty());
  const RunRecord* median = s.median_run("spawn", "3.12.1");
  REQUIRE(median);
  CHECK(static_cast<double>(median->wall_ns) / 1e9 == Approx(s.summary.cell("spawn", "3.12.1")->wall_s.median));
  CHECK(s.median_run("subinterp", "3.9.18") == nullptr);
}

TEST_CASE("gilhost run names the profile it ran in the title; gilhost report names the experiment", "[report]") {
  const MergedResults m = merge_files({fixture("report_race_a.jsonl")});
  ReportOptions as_run;
  as_run.profile_in_title = true;
  const std::string run_text = render_text(build_report_model(m, as_run));
  const std::string report_text = render_text(build_report_model(m, {}));
  CHECK(run_text.rfind("race (profile quick) — ", 0) == 0);
  CHECK(report_text.rfind("race — ", 0) == 0);
  CHECK(run_text.substr(run_text.find('\n')) == report_text.substr(report_text.find('\n')));
}
