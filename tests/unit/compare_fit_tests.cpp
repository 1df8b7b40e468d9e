// Issue 26 items 3, 4 and 8: compare fits a terminal (tables fitted, prose broken at spaces), a grid cell
// says what its numbers are, a list result reads as a count and a summary, the ETA follows each cell's
// pace, a GIL turned back on shows beside its build, and report keeps the vs table run printed.
#include <catch2/catch.hpp>

#include "config/experiment.hpp"
#include "report/build_facts.hpp"
#include "report/compare.hpp"
#include "report/fit.hpp"
#include "report/html.hpp"
#include "report/metrics.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/summary.hpp"
#include "report/text.hpp"
#include "report/text_grid.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "run/progress.hpp"
#include "util/strings.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using Catch::Matchers::Contains;

namespace {

MetaRecord fit_meta(std::int64_t started, const std::string& experiment_path = "") {
  MetaRecord m;
  m.format = kResultsFormat;
  m.started_unix_ns = started;
  MachineRecord machine;
  machine.hostname = "a-rather-long-host-name.example.internal";
  machine.cpu_model = "AMD EPYC 7B13 64-Core Processor";
  machine.cores = 2;
  machine.kernel = "Linux 6.18.44-fc-v1272";
  m.machine = machine;
  m.experiment.name = "exp";
  if (!experiment_path.empty()) m.experiment.document["path"] = experiment_path;
  return m;
}

RunRecord fit_run(const std::string& case_name, const std::string& build, double wall_ms, int repeat) {
  return report_test::run_record("exp", case_name, build, wall_ms, repeat);
}

// One session: two long-named cases on two builds, five runs a cell, B `factor` times A's time.
std::vector<ResultsLine> fit_session(std::int64_t started, double factor) {
  std::vector<ResultsLine> lines{fit_meta(started)};
  for (const char* c : {"subinterpreters_shared_gil[subinterpreters=8]", "threads_with_a_long_name[workers=8]"})
    for (const char* b : {"3.12.1", "3.14.7t"})
      for (int i = 0; i < 5; ++i) lines.emplace_back(fit_run(c, b, factor * (100 + i), i));
  return lines;
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const auto& line : split(text, '\n')) widest = std::max(widest, display_width(line));
  return widest;
}

}  // namespace

TEST_CASE("wrap_text breaks at spaces only, never inside a word", "[compare-fit]") {
  const std::string text = "session started 2026-12-04 19:58:18 UTC on /a/very/long/path/that/will/not/fit/anywhere.jsonl ok";
  const std::string wrapped = wrap_text(text, 20);
  for (const auto& word : split(text, ' ')) CHECK_THAT(wrapped, Contains(word));  // every word whole
  for (const auto& line : split(wrapped, '\n'))
    if (line.find(' ', 2) != std::string::npos) CHECK(display_width(line) <= 20);  // only a lone word is wider
  CHECK(wrap_text("short", 20) == "short");
  CHECK(wrap_text("  a b c d e f", 7) == "  a b c\n    d e\n    f");  // the line's indent, then two more
  CHECK(wrap_text(text, 0) == text);
}

TEST_CASE("compare fits 80 columns; --wide (width 0) keeps every column", "[compare-fit]") {
  const Comparison c = compare_runs(fit_session(1'780'000'000'000'000'000, 1), fit_session(1'780'000'300'000'000'000, 1.5), {});
  REQUIRE(c.rows.size() == 4);
  const std::string fitted = render_comparison_text(c, 80);
  CHECK(widest_line(fitted) <= 80);
  CHECK_THAT(fitted, Contains("2026"));  // the session's date is whole, on one line
  CHECK_THAT(fitted, Contains("experiment: exp"));  // said once, not in every row
  CHECK_THAT(fitted, Contains("! changed"));
  CHECK_THAT(fitted, Contains("3.14.7t"));
  const std::string wide = render_comparison_text(c, 0);
  CHECK(widest_line(wide) > 80);
  CHECK_THAT(wide, Contains("A wall"));
  CHECK_THAT(wide, Contains("subinterpreters_shared_gil[subinterpreters=8]"));
  // Where columns are left out the text says which, and how to see them.
  const std::string narrow = render_comparison_text(c, 60);
  CHECK(widest_line(narrow) <= 60);
  CHECK_THAT(narrow, Contains("--wide shows"));
  CHECK_THAT(narrow, Contains("1.50x slower"));  // the ratio in words wraps rather than being cut
  CHECK_THAT(narrow, !Contains("slo…"));
}

TEST_CASE("a list result reads as its count and a summary", "[compare-fit]") {
  CHECK(result_display(nlohmann::json::array({799998, 799998, 799998, 799998, 799998, 799998, 799998, 799998})) ==
        "8 values, all 799998");
  CHECK(result_display(nlohmann::json::array({3, 1, 2})) == "3 values, 1–3");
  CHECK(result_display(nlohmann::json::array({"a", 1})) == "2 values");
  CHECK(result_display(nlohmann::json::array()) == "no values");
  CHECK(result_display(nlohmann::json(42)) == "42");
}

TEST_CASE("the ETA runs each planned run at its own cell's pace so far", "[compare-fit]") {
  Case slow, fast;
  slow.name = "slow";
  fast.name = "fast";
  Interpreter interp;
  interp.label = "3.12.1";
  std::vector<PlannedRun> plan;
  for (int round = 0; round < 3; ++round)
    for (const Case* c : {&slow, &fast}) plan.push_back({c, &interp, round, false, round});
  Progress p;
  p.done = 2;  // round 0 done: slow took 10 s, fast 1 s
  p.total = 6;
  p.run = &plan[2];
  p.rest_end = plan.data() + plan.size();
  p.observed[{&slow, &interp}] = {1, 10.0};
  p.observed[{&fast, &interp}] = {1, 1.0};
  p.elapsed_s = 14;
  p.run_elapsed_s = 3;
  // This slow run's 7 s left, then fast 1 + slow 10 + fast 1: 19 s (the mean pace would say 5.5 x 4 - 3 = 19
  // as well here, so a plan whose rest is all fast tells them apart).
  CHECK(eta_seconds(p).value() == Approx(19));
  p.run = &plan[3];  // fast: then slow, fast
  p.run_elapsed_s = 0.5;
  CHECK(eta_seconds(p).value() == Approx(0.5 + 10 + 1));
  std::vector<PlannedRun> all_fast(3, PlannedRun{&fast, &interp, 1, false, 1});
  p.run = &all_fast[0];
  p.rest_end = all_fast.data() + all_fast.size();
  p.run_elapsed_s = 0;
  CHECK(eta_seconds(p).value() == Approx(3));  // not 3 x the mean of 5.5 s
  p.done = 0;
  CHECK_FALSE(eta_seconds(p));
}

TEST_CASE("a GIL an extension turned back on shows beside its build", "[compare-fit]") {
  Summary sum;
  Cell ft;
  ft.free_threaded = true;
  ft.gil_enabled = true;
  ft.gil_reenabled_by = {"legacy_ext"};
  sum.cells[{"threads", "3.14.7t"}] = ft;
  Cell forced = ft;
  forced.gil_forced = true;
  forced.gil_reenabled_by.clear();
  sum.cells[{"threads", "3.14.7t+gil"}] = forced;
  Cell off;
  off.free_threaded = true;
  off.gil_enabled = false;
  sum.cells[{"threads", "3.13.0t"}] = off;
  CHECK(gil_reenabled_text(sum, "3.14.7t") == "GIL re-enabled by legacy_ext");
  CHECK(gil_reenabled_text(sum, "3.14.7t+gil").empty());  // forced on is not re-enabled
  CHECK(gil_reenabled_text(sum, "3.13.0t").empty());
}

TEST_CASE("report of an ad-hoc script's results keeps the vs table run printed", "[compare-fit]") {
  LoadedResults file;
  file.path = "adhoc.jsonl";
  file.lines.emplace_back(fit_meta(1'780'000'000'000'000'000, "/tmp/s.py (as an experiment)"));
  for (const char* b : {"3.12.1", "3.14.7t"})
    for (int i = 0; i < 6; ++i) file.lines.emplace_back(fit_run("s", b, std::string(b) == "3.12.1" ? 100 + i : 200 + i, i));
  const ReportModel adhoc = build_report_model(merge_results({file}), {});
  REQUIRE(adhoc.sections.size() == 1);
  CHECK(adhoc.sections[0].compares_builds());
  CHECK_THAT(render_text(adhoc, {80, ""}), Contains("vs 3.12.1"));
  // A TOML experiment's report compares builds only when asked (--baseline-python).
  std::get<MetaRecord>(file.lines.front()).experiment.document["path"] = "/tmp/exp.toml";
  CHECK_FALSE(build_report_model(merge_results({file}), {}).sections[0].compares_builds());
}

TEST_CASE("the metrics table leaves out a timer that repeats the case time", "[compare-fit]") {
  Summary sum;
  sum.cases = {"cpu"};
  sum.interpreters = {"3.12.1"};
  Cell cell;
  for (int i = 0; i < 3; ++i) {
    RunRecord r = fit_run("cpu", "3.12.1", 1000, i);
    r.status = RunStatus::ok;
    r.metrics = {{"wall_s", 1.02}, {"rps", 500.0 + i}, {"elapsed", 3.0}};
    cell.runs.push_back(r);
  }
  cell.wall_s = compute_stats({1.0, 1.0, 1.0});
  sum.cells[{"cpu", "3.12.1"}] = cell;
  const Table t = build_metrics_table(sum, ExperimentInfo{});
  std::vector<std::string> metrics;
  for (const auto& row : t.rows) metrics.push_back(row[1]);
  // wall_s is within 10 % of the 1 s case time: the grid has it. elapsed (3 s) times something else.
  CHECK(metrics == std::vector<std::string>{"elapsed (the script's own timer)", "rps"});
}

TEST_CASE("a view's title wraps at spaces rather than being cut mid-phrase", "[compare-fit]") {
  Table t;
  t.columns.push_back(Column("view").wrapped());
  t.columns.emplace_back("3.12.1", Align::right);
  t.columns.emplace_back("3.14.7t", Align::right);
  t.add_row({"8 threads speedup over sequential, the free-threading answer", "1.02x (0.98–1.05) n=6", "3.10x (2.90–3.30) n=6"});
  const std::string text = render_text_table(t, 64);  // room for the figures, not for the title
  CHECK(widest_line(text) <= 64);
  CHECK_THAT(text, Contains("8 threads speedup"));
  CHECK_THAT(text, !Contains("…"));
  CHECK_THAT(text, Contains("3.10x (2.90–3.30) n=6"));  // the figures whole, on the title's first line
}

TEST_CASE("the grid's case column gives up its width before a cell's figures", "[compare-fit]") {
  Grid g;
  g.columns.push_back({"3.12.1", "3.12.1", false});
  g.cases = {"subinterpreters_shared_gil[subinterpreters=8]"};
  GridCell cell;
  cell.state = GridCell::State::measured;
  cell.wall = "201 ms n=1";
  cell.result = "checksum " + result_display(nlohmann::json::array({399999, 399999, 399999, 399999, 399999, 399999, 399999, 399999}));
  cell.mark = "✓";
  g.cells = {{cell}};
  const auto blocks = grid_blocks(g, 80);
  REQUIRE(blocks.size() == 1);
  CHECK(table_width(blocks[0]) <= 80);
  CHECK(blocks[0].rows[0][1] == "201 ms n=1  checksum 8 values, all 399999 ✓");  // whole
  CHECK(blocks[0].rows[0][0] == "subinterpreters_shared_g…[8]");  // the name cut to 28, its sweep value kept
}

TEST_CASE("the HTML grid puts builds in rows where across would pass 1400 px", "[compare-fit]") {
  auto html_of = [](int builds) {
    LoadedResults file;
    file.path = "many.jsonl";
    file.lines.emplace_back(fit_meta(1'780'000'000'000'000'000));
    for (int b = 0; b < builds; ++b)
      for (int i = 0; i < 3; ++i) file.lines.emplace_back(fit_run("cpu", "3." + std::to_string(9 + b) + ".1", 100 + i, i));
    return render_html(build_report_model(merge_results({file}), {}));
  };
  const std::string two = html_of(2), ten = html_of(10);
  CHECK_THAT(two, Contains("<th>3.9.1</th><th>3.10.1</th>"));  // across
  CHECK_THAT(two, !Contains("<th>build</th><th>median case time · result</th>"));
  CHECK_THAT(ten, Contains("<th>build</th><th>median case time · result</th>"));  // one row a build
  CHECK_THAT(ten, Contains("<td class=\"case\" rowspan=\"10\">cpu</td>"));
}
