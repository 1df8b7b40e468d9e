// report: statistics, the summary of run records, and text tables.
#include <catch2/catch.hpp>

#include "report/model.hpp"
#include "report/ratio.hpp"
#include "report/stats.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "report/text.hpp"
#include "results/record_json.hpp"
#include "util/strings.hpp"

using gilhost::Cell;
using gilhost::Stats;
using gilhost::Summary;
using nlohmann::json;

TEST_CASE("compute_stats: odd count", "[report][stats]") {
  Stats s = gilhost::compute_stats({3.0, 1.0, 2.0, 10.0, 2.5});
  CHECK(s.n == 5);
  CHECK(s.median == 2.5);
  CHECK(s.min == 1.0);
  CHECK(s.max == 10.0);
  // |x - 2.5| = 0.5 1.5 0.5 7.5 0 -> median 0.5
  CHECK(s.mad == 0.5);
  CHECK(s.mean == Approx(3.7));
  CHECK(s.relative_spread() == Approx(0.2));
}

TEST_CASE("compute_stats: even count, and the spread's robustness to one outlier", "[report][stats]") {
  Stats s = gilhost::compute_stats({4.0, 1.0, 3.0, 2.0});
  CHECK(s.n == 4);
  CHECK(s.median == 2.5);
  // |x - 2.5| = 1.5 1.5 0.5 0.5 -> median 1.0
  CHECK(s.mad == 1.0);
  CHECK(s.mean == 2.5);
  CHECK(s.stdev == Approx(1.2909944));

  Stats outlier = gilhost::compute_stats({1.0, 1.0, 1.0, 100.0});
  CHECK(outlier.median == 1.0);
  CHECK(outlier.mad == 0.0);
  CHECK(outlier.max == 100.0);
  CHECK(outlier.stdev > 40);
}

TEST_CASE("compute_stats: one value and none", "[report][stats]") {
  Stats one = gilhost::compute_stats({7.0});
  CHECK(one.n == 1);
  CHECK(one.median == 7.0);
  CHECK(one.mad == 0.0);
  CHECK(one.stdev == 0.0);
  Stats none = gilhost::compute_stats({});
  CHECK(none.n == 0);
  CHECK(none.median == 0.0);
  CHECK(none.relative_spread() == 0.0);
  CHECK(gilhost::median_of({}) == 0.0);
  CHECK(gilhost::median_of({5.0, 1.0}) == 3.0);
}

namespace {
// Measured ok runs with these wall times, repeat index = position.
std::vector<gilhost::RunRecord> walls(const std::vector<std::int64_t>& ns) {
  std::vector<gilhost::RunRecord> out;
  for (std::size_t i = 0; i < ns.size(); ++i) {
    gilhost::RunRecord r;
    r.repeat = static_cast<int>(i);
    r.wall_ns = ns[i];
    out.push_back(r);
  }
  return out;
}
}  // namespace

TEST_CASE("paired_wall_ratios: pair by repeat, skip runs without a wall time", "[report][stats]") {
  CHECK(gilhost::paired_wall_ratios(walls({2, 4, 0, 9, 6}), walls({1, 2, 3, -1})) == std::vector<double>{2.0, 2.0});
  CHECK(gilhost::paired_wall_ratios(walls({1, 3}), walls({2, 4})) == std::vector<double>{0.5, 0.75});
  CHECK(gilhost::paired_wall_ratios({}, walls({1})).empty());
  auto warm = walls({8});
  warm[0].warmup = true;
  CHECK(gilhost::paired_wall_ratios(warm, walls({1})).empty());
}

namespace {

json run(const std::string& c, const std::string& interp, int repeat, double wall_s, json result = 4000000) {
  return {{"type", "run"},
          {"experiment", "race"},
          {"case", c},
          {"interpreter", interp},
          {"free_threaded", interp.back() == 't'},
          {"mode", "embed"},
          {"repeat", repeat},
          {"warmup", false},
          {"status", "ok"},
          {"wall_ns", static_cast<std::int64_t>(wall_s * 1e9)},
          {"init_ns", 20000000},
          {"cpu_per_wall", 0.98},
          {"cpu", {{"voluntary_switches", 10 + repeat}, {"involuntary_switches", 2}}},
          {"rss", {{"peak_tree_rss_bytes", 1000000 * (repeat + 1)}, {"peak_threads", 5}, {"peak_processes", 1}}},
          {"max_rss_kb", 900},
          {"has_result", !result.is_null()},
          {"result", result},
          {"error", nullptr},
          {"gil_enabled", interp.back() != 't'},
          {"expect_ok", true},
          {"expect", json::array()}};
}

json failed(json r, const std::string& check, const std::string& detail) {
  r["expect_ok"] = false;
  r["expect"] = json::array({{{"expect", "status ok"}, {"ok", true}, {"detail", ""}},
                             {{"expect", check}, {"ok", false}, {"detail", detail}}});
  return r;
}

json errored(json r, const std::string& type) {
  r["status"] = "error";
  r["has_result"] = false;
  r["result"] = nullptr;
  r["error"] = {{"type", type}, {"message", "boom"}};
  return r;
}

const std::string k312 = "3.12.4", k313t = "3.13.1t";

std::vector<json> records() {
  std::vector<json> rs;
  rs.push_back({{"type", "meta"}, {"experiment", "race"}});
  json warm = run("plain", k312, 0, 100.0, 1);
  warm["warmup"] = true;
  rs.push_back(warm);
  // plain: 1, 3, 2 s; locked (written out of order): 3, 3, 4 s -> ratios 3, 1, 2 paired by repeat.
  rs.push_back(run("plain", k312, 0, 1.0, {{"counter", 4000000}, {"t", 1}}));
  rs.push_back(run("plain", k312, 1, 3.0, {{"counter", 4000000}, {"t", 2}}));
  rs.push_back(run("plain", k312, 2, 2.0, {{"counter", 4000000}, {"t", 3}}));
  rs.push_back(run("locked", k312, 2, 4.0));
  rs.push_back(run("locked", k312, 0, 3.0));
  rs.push_back(run("locked", k312, 1, 3.0));
  rs.push_back(failed(run("varied", k312, 0, 1.0, 3999000), "result == 4000000", "got 3999000"));
  rs.push_back(failed(run("varied", k312, 1, 1.0, 3998000), "result == 4000000", "got 3998000"));
  rs.push_back(failed(run("varied", k312, 2, 1.0, 3999000), "result == 4000000", "got 3999000"));
  rs.push_back(errored(run("broken", k312, 0, 0.5), "KeyError"));
  rs.push_back(errored(run("broken", k312, 1, 0.5), "KeyError"));
  rs.push_back(run("words", k312, 0, 0.1, "alpha"));
  rs.push_back(run("words", k312, 1, 0.1, "beta"));
  json timeout = run("words", k312, 2, 0.1, nullptr);
  timeout["status"] = "timeout";
  rs.push_back(timeout);
  rs.push_back(run("plain", k313t, 0, 2.0, {{"counter", 4000000}, {"t", 1}}));
  rs.push_back(run("locked", k313t, 0, 1.0));
  rs.push_back({{"type", "skip"}, {"case", "plain"}, {"interpreter", "3.8.10"}, {"reason", "too old"}});
  return rs;
}

// The summary of records written as a results file holds them (metas are left out: they hold no run).
Summary summarize_lines(const std::vector<json>& lines, const std::string& baseline,
                        const std::map<std::string, std::string>& show = {}) {
  std::vector<gilhost::RunRecord> runs;
  std::vector<gilhost::SkipRecord> skips;
  for (const auto& j : lines) {
    if (j["type"] == "run") runs.push_back(gilhost::run_from_json(j));
    if (j["type"] == "skip") skips.push_back(std::get<gilhost::SkipRecord>(gilhost::line_from_json(j)));
  }
  return gilhost::summarize(runs, skips, baseline, show);
}

const Cell& cell(const Summary& s, const std::string& c, const std::string& i) {
  const Cell* p = s.cell(c, i);
  if (!p) FAIL("no cell " << c << " x " << i);
  return *p;
}

}  // namespace

TEST_CASE("summarize: cells, statistics and result texts", "[report][summary]") {
  Summary s = summarize_lines(records(), "plain", {{"plain", "counter"}});
  CHECK(s.experiment == "race");
  CHECK(s.baseline == "plain");
  CHECK(s.cases == std::vector<std::string>{"plain", "locked", "varied", "broken", "words"});
  CHECK(s.interpreters == std::vector<std::string>{k312, k313t});
  CHECK(s.cells.size() == 7);
  CHECK(s.skips.size() == 1);
  CHECK(s.cell("broken", k313t) == nullptr);

  const Cell& plain = cell(s, "plain", k312);
  CHECK(plain.runs.size() == 3);  // the warm-up is left out
  CHECK(plain.wall_s.n == 3);
  CHECK(plain.wall_s.median == Approx(2.0));
  CHECK(plain.wall_s.min == Approx(1.0));
  CHECK(plain.wall_s.max == Approx(3.0));
  CHECK(plain.wall_s.mad == Approx(1.0));
  CHECK(plain.init_s.median == Approx(0.02));
  CHECK(plain.cpu_per_wall.median == Approx(0.98));
  CHECK(plain.voluntary_switches.median == 11);
  CHECK(plain.peak_tree_rss_bytes == 3000000);
  CHECK(plain.max_rss_bytes == 900 * 1024);
  CHECK(plain.peak_threads == 5);
  CHECK(plain.statuses == "ok");
  CHECK(plain.result_text == "4000000");  // equal in every run (shown: result["counter"])
  CHECK(plain.expectations_ok());
  CHECK(plain.gil_enabled == true);
  CHECK_FALSE(plain.free_threaded);
  CHECK(plain.mode == "embed");

  const Cell& ft = cell(s, "plain", k313t);
  CHECK(ft.free_threaded);
  CHECK(ft.gil_enabled == false);

  // Numbers that vary: the range.
  const Cell& varied = cell(s, "varied", k312);
  CHECK(varied.result_text == "3998000–3999000");
  CHECK(varied.runs_failed_expectations == 3);
  CHECK_FALSE(varied.expectations_ok());
  CHECK(varied.failures ==
        std::vector<std::string>{"result == 4000000: got 3999000", "result == 4000000: got 3998000"});

  // Errors: the exception's type; other values that vary: the first, marked.
  const Cell& broken = cell(s, "broken", k312);
  CHECK(broken.result_text == "KeyError");
  CHECK(broken.statuses == "error");
  CHECK(broken.wall_s.n == 2);  // error runs still ran to the end and are timed
  const Cell& words = cell(s, "words", k312);
  CHECK(words.result_text == "alpha (varies)");
  CHECK(words.statuses == "ok x2, timeout x1");
  CHECK(words.wall_s.n == 2);  // a timed-out run has no meaningful wall time

  CHECK(s.expectation_failures == 1);
}

TEST_CASE("summarize: ratios against the baseline, paired by repeat", "[report][summary]") {
  Summary s = summarize_lines(records(), "plain");
  const Cell& locked = cell(s, "locked", k312);
  REQUIRE(locked.ratio);
  CHECK(locked.ratio->n == 3);
  CHECK(locked.ratio->median == Approx(2.0));  // 3/1, 3/3, 4/2 (by position it would be 1.5)
  CHECK(locked.ratio->min == Approx(1.0));
  CHECK(locked.ratio->max == Approx(3.0));
  const Cell& self = cell(s, "plain", k312);
  REQUIRE(self.ratio);
  CHECK(self.ratio->median == Approx(1.0));
  // Per interpreter: the 3.13t cells pair with 3.13t's baseline.
  const Cell& ft = cell(s, "locked", k313t);
  REQUIRE(ft.ratio);
  CHECK(ft.ratio->median == Approx(0.5));
  // Runs that did not end ok have no ratio.
  CHECK_FALSE(cell(s, "broken", k312).ratio);
  // Without the show key, the whole dict result is shown, and it varies.
  CHECK(self.result_text == "{\"counter\":400000… (varies)");

  Summary none = summarize_lines(records(), "");
  CHECK_FALSE(cell(none, "locked", k312).ratio);
}

TEST_CASE("summarize: a swept baseline is named by its base name", "[report][summary]") {
  std::vector<json> rs = {run("base[n=1]", k312, 0, 2.0), run("base[n=2]", k312, 0, 4.0), run("other", k312, 0, 3.0)};
  Summary s = summarize_lines(rs, "base");
  REQUIRE(cell(s, "other", k312).ratio);
  CHECK(cell(s, "other", k312).ratio->median == Approx(1.5));  // against the first expansion
}

TEST_CASE("result_display: strings bare, floats short, long values cut", "[report][summary]") {
  CHECK(gilhost::result_display(json("text")) == "text");
  CHECK(gilhost::result_display(json(nullptr)) == "-");
  CHECK(gilhost::result_display(json(42)) == "42");
  CHECK(gilhost::result_display(json(3.14159265)) == "3.142");
  CHECK(gilhost::result_display(json({1, 2})) == "2 values, 1–2");  // a list: its count and a summary
  CHECK(gilhost::result_display(json(std::string(30, 'a')), 10) == "aaaaaaaaa…");
  // Cut by characters, never inside a UTF-8 sequence.
  std::string accents;
  for (int i = 0; i < 30; ++i) accents += "é";
  std::string cut = gilhost::result_display(json(accents), 10);
  std::string expected;
  for (int i = 0; i < 9; ++i) expected += "é";
  CHECK(cut == expected + "…");
  CHECK(gilhost::display_width(cut) == 10);
}

TEST_CASE("TextTable: columns sized by display width, UTF-8 aware", "[report][table]") {
  gilhost::TextTable t({"case", "wall", "ok"}, {false, true, true});
  t.add_row({"plain", "1.00 s ±2.0%", "✓"});
  t.add_row({"lockéd", "12.3 ms", "✗✗"});
  t.add_row({"x"});  // short rows are padded with empty cells
  const std::string expected =
      "case            wall  ok\n"
      "────────────────────────\n"
      "plain   1.00 s ±2.0%   ✓\n"
      "lockéd       12.3 ms  ✗✗\n"
      "x\n";
  CHECK(t.render() == expected);

  gilhost::TextTable left({"a", "b"});
  left.add_row({"ü", "long value"});
  left.add_row({"wide", "v"});
  CHECK(left.render() == "a     b\n────────────────\nü     long value\nwide  v\n");
}

TEST_CASE("format_wall: median and spread", "[report][table]") {
  Stats none;
  CHECK(gilhost::format_wall(none) == "-");
  Stats s = gilhost::compute_stats({0.31, 0.312, 0.315});
  CHECK(gilhost::format_wall(s) == gilhost::format_seconds(0.312) + " ±0.6%");
  CHECK(gilhost::format_wall(gilhost::compute_stats({1.5})) == gilhost::format_seconds(1.5));
}

TEST_CASE("gil_text: forced, re-enabled by a named module, or for a reason the results do not give", "[report][summary]") {
  const std::string ft = "3.14.7t", forced = "3.14.7t+gil";
  auto gil_run = [&](const std::string& c, const std::string& interp, bool on) {
    json r = run(c, interp, 0, 1.0);
    r["free_threaded"] = true;
    r["gil_enabled"] = on;
    return r;
  };
  json reenabled = gil_run("ext", ft, true);
  reenabled["gil_reenabled_by"] = json::array({"noslot"});
  json reenabled2 = gil_run("ext", ft, true);
  reenabled2["repeat"] = 1;
  reenabled2["gil_reenabled_by"] = json::array({"noslot", "other"});
  json forced_run = gil_run("ext", forced, true);
  forced_run["gil_forced"] = true;
  json old_file = gil_run("old", ft, true);  // a results file from before gil_reenabled_by
  const std::vector<json> lines{reenabled, reenabled2, forced_run, old_file, gil_run("plain", ft, false), run("plain", "3.12.4", 0, 1.0)};
  Summary s = summarize_lines(lines, "");
  CHECK(cell(s, "ext", ft).gil_reenabled_by == std::vector<std::string>{"noslot", "other"});
  CHECK(gilhost::gil_text(cell(s, "ext", ft)) == "GIL re-enabled by noslot, other");
  CHECK(gilhost::gil_text(cell(s, "ext", forced)) == "on (forced)");
  CHECK(gilhost::gil_text(cell(s, "old", ft)) == "ON (re-enabled)");
  CHECK(gilhost::gil_text(cell(s, "plain", ft)) == "off");
  CHECK(gilhost::gil_text(cell(s, "plain", "3.12.4")) == "on");
  json no_gil_field = run("plain", "3.12.4", 0, 1.0);
  no_gil_field.erase("gil_enabled");
  CHECK(gilhost::gil_text(cell(summarize_lines({no_gil_field}, ""), "plain", "3.12.4")) == "-");

  // The terminal report's details say it in the gil column.
  gilhost::MergedResults merged;
  for (const auto& j : lines) merged.lines.push_back(gilhost::line_from_json(j));
  const std::string text = gilhost::render_text(gilhost::build_report_model(merged, {}));
  CHECK(text.find("GIL re-enabled by noslot, other") != std::string::npos);
  CHECK(text.find("on (forced)") != std::string::npos);
}

TEST_CASE("summarize: a run whose case never started has no wall time to show", "[report][summary]") {
  json never = errored(run("sub", "3.14.7t", 0, 0.0), "SubinterpreterError");
  json ran = errored(run("sub", "3.14.7t", 1, 0.5), "ValueError");
  Summary s = summarize_lines({never}, "");
  CHECK(cell(s, "sub", "3.14.7t").wall_s.n == 0);
  CHECK(gilhost::format_wall(cell(s, "sub", "3.14.7t").wall_s) == "-");
  CHECK(cell(s, "sub", "3.14.7t").result_text == "SubinterpreterError");
  Summary both = summarize_lines({never, ran}, "");
  CHECK(cell(both, "sub", "3.14.7t").wall_s.n == 1);
  CHECK(cell(both, "sub", "3.14.7t").wall_s.median == Approx(0.5));
}
