// compare's verdicts: a cell has changed only when its ratio is beyond the threshold and the rank-sum
// test of its wall times says p < alpha; too few runs say so; --fail-on-change counts the changes only;
// two sessions are named as such. Hand-made records, and files through cmd_compare as the CLI calls it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "helpers.hpp"
#include "report/compare.hpp"
#include "report/export.hpp"
#include "report/significance.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"

using namespace gilhost;
using nlohmann::json;

namespace {

constexpr std::int64_t kStartA = 1'780'000'000'000'000'000;  // two sessions five minutes apart
constexpr std::int64_t kStartB = kStartA + 300'000'000'000;

MetaRecord meta(std::int64_t started, const std::string& host = "vm") {
  MetaRecord m;
  m.format = kResultsFormat;
  m.gilhost_version = "test";
  m.started_unix_ns = started;
  MachineRecord machine;
  machine.hostname = host;
  machine.cpu_model = "AMD EPYC";
  machine.cores = 2;
  m.machine = machine;
  m.experiment.name = "exp";
  return m;
}

RunRecord run(double wall_ms, int repeat, const std::string& case_name = "cpu") {
  RunRecord r;
  r.experiment = "exp";
  r.case_name = case_name;
  r.interpreter = "3.12.1";
  r.python = "3.12.1";
  r.repeat = repeat;
  r.round = repeat;
  r.wall_ns = static_cast<std::int64_t>(wall_ms * 1e6);
  return r;
}

// A session of one cell: its runs' wall times in ms, one repeat each.
std::vector<ResultsLine> session(std::int64_t started, const std::vector<double>& walls_ms, const std::string& host = "vm") {
  std::vector<ResultsLine> lines{meta(started, host)};
  for (std::size_t i = 0; i < walls_ms.size(); ++i) lines.emplace_back(run(walls_ms[i], static_cast<int>(i)));
  return lines;
}

const CompareRow& only_row(const Comparison& c) {
  REQUIRE(c.rows.size() == 1);
  return c.rows.front();
}

void write_file(const std::string& path, const std::vector<ResultsLine>& lines) {
  ResultsWriter w(path);
  for (const auto& line : lines) std::visit([&](const auto& record) { w.append(record); }, line);
}

}  // namespace

TEST_CASE("the fewest runs a side that can reach a level", "[report][compare][significance]") {
  CHECK(smallest_p_value(3, 3) == Approx(0.1));
  CHECK(smallest_p_value(4, 4) == Approx(2.0 / 70));
  CHECK(smallest_p_value(5, 5) == Approx(2.0 / 252));
  CHECK(smallest_p_value(0, 5) == 1.0);
  CHECK(smallest_p_value(1, 1) == 1.0);
  CHECK(runs_needed_per_side(kSignificanceLevel) == 4);
  CHECK(runs_needed_per_side(0.01) == 5);
  CHECK(runs_needed_per_side(0.2) == 3);
}

TEST_CASE("compare: a clear change over 5 + 5 runs has changed", "[report][compare][significance]") {
  auto a = session(kStartA, {100, 102, 98, 101, 99});
  auto b = session(kStartA, {130, 128, 133, 131, 129});
  const Comparison c = compare_runs(a, b, {});
  const CompareRow& r = only_row(c);
  CHECK(r.ratio.value == Approx(1.3).epsilon(0.02));
  CHECK(r.beyond_threshold);
  CHECK(r.test.exact);
  CHECK(r.test.p_value == Approx(2.0 / 252));  // every B run slower than every A run
  CHECK(r.verdict == Verdict::changed);
  CHECK(c.changed() == 1);
  CHECK(fail_on_change_status(c) == 1);
  CHECK(verdict_text(r, c.options) == "! changed");
  CHECK(format_p(r) == "0.008");

  SECTION("the same runs under a stricter level: p 0.008 is not below 0.005") {
    CompareOptions strict;
    strict.alpha = 0.005;
    const Comparison s = compare_runs(a, b, strict);
    // 5 a side cannot go below 0.0079: too few runs for that level, whatever the times.
    CHECK(only_row(s).verdict == Verdict::too_few_runs);
    CHECK(verdict_text(only_row(s), s.options) == "too few runs to tell (5 a side; 6+ needed)");
    CHECK(fail_on_change_status(s) == 0);
  }
  SECTION("a level outside (0, 1) is refused") {
    CompareOptions bad;
    bad.alpha = 0;
    CHECK_THROWS_AS(compare_runs(a, b, bad), std::invalid_argument);
  }
}

TEST_CASE("compare: the same distribution is no significant change, however its ratio looks",
          "[report][compare][significance]") {
  // Two B runs faster than every A run, three slower: the test sees no shift, but the median of the
  // pairs' ratios says 1.15x slower, so the threshold alone would flag this cell.
  auto a = session(kStartA, {100, 101, 102, 103, 104});
  auto b = session(kStartA, {115, 116, 117, 90, 91});
  const Comparison c = compare_runs(a, b, {});
  const CompareRow& r = only_row(c);
  CHECK(r.beyond_threshold);
  CHECK(r.noisy);
  CHECK(r.test.p_value > 0.05);
  CHECK(r.verdict == Verdict::no_change);
  CHECK(verdict_text(r, c.options) == "no significant change");
  CHECK(c.changed() == 0);
  CHECK(fail_on_change_status(c) == 0);

  SECTION("identical runs: p is 1, not too few runs") {
    const Comparison same = compare_runs(a, a, {});
    CHECK(only_row(same).test.p_value == 1.0);
    CHECK(only_row(same).verdict == Verdict::no_change);
  }
  SECTION("a significant shift within the threshold is not a change") {
    auto tight_a = session(kStartA, {100, 100.5, 101, 100.2, 100.7, 100.4});
    auto tight_b = session(kStartA, {103, 103.5, 104, 103.2, 103.7, 103.4});
    const Comparison t = compare_runs(tight_a, tight_b, {});
    CHECK(only_row(t).test.p_value < 0.05);
    CHECK_FALSE(only_row(t).beyond_threshold);
    CHECK(only_row(t).verdict == Verdict::within_threshold);
    CHECK(verdict_text(only_row(t), t.options) == "significant, within 10%");
    CHECK(fail_on_change_status(t) == 0);
  }
}

TEST_CASE("compare: 3 + 3 runs are too few to tell, even for a doubling", "[report][compare][significance]") {
  auto a = session(kStartA, {100, 101, 99});
  auto b = session(kStartA, {200, 202, 198});
  const Comparison c = compare_runs(a, b, {});
  const CompareRow& r = only_row(c);
  CHECK(r.beyond_threshold);
  CHECK(r.test.p_value == Approx(0.1));
  CHECK(r.verdict == Verdict::too_few_runs);
  CHECK(verdict_text(r, c.options) == "too few runs to tell (3 a side; 4+ needed)");
  CHECK(fail_on_change_status(c) == 0);
  const std::string text = render_comparison_text(c);
  CHECK(text.find("1 cells compared, 0 changed beyond 10% with p < 0.05; 1 more beyond 10% but not significant; "
                  "1 with too few runs to tell (4+ a side needed)") != std::string::npos);

  SECTION("unequal sides say both counts") {
    auto b2 = session(kStartA, {200, 202});
    CHECK(verdict_text(only_row(compare_runs(a, b2, {})), {}) == "too few runs to tell (3 and 2; 4+ a side needed)");
  }
  SECTION("4 + 4 runs can tell") {
    auto a4 = session(kStartA, {100, 101, 99, 100.5});
    auto b4 = session(kStartA, {200, 202, 198, 201});
    CHECK(only_row(compare_runs(a4, b4, {})).verdict == Verdict::changed);
  }
}

TEST_CASE("compare: every format carries p and the verdict", "[report][compare][significance]") {
  std::vector<ResultsLine> a{meta(kStartA)}, b{meta(kStartA)};
  for (int i = 0; i < 5; ++i) {
    a.emplace_back(run(100 + i, i, "fast"));
    b.emplace_back(run(150 + i, i, "fast"));
    a.emplace_back(run(200 + i, i, "steady"));
    b.emplace_back(run(202 - i, i, "steady"));
  }
  Comparison c = compare_runs(a, b, {});
  REQUIRE(c.rows.size() == 2);
  c.path_a = "a.jsonl";
  c.path_b = "b.jsonl";
  const std::string text = render_comparison_text(c);
  CHECK(text.find("verdict") != std::string::npos);
  CHECK(text.find("0.008  ! changed") != std::string::npos);
  CHECK(text.find("no significant change") != std::string::npos);
  CHECK(text.find("2 cells compared, 1 changed beyond 10% with p < 0.05") != std::string::npos);
  CHECK(text.find("! exp: fast @ 3.12.1: 1.49x slower (") != std::string::npos);
  CHECK(text.find(", n=5) (p 0.008)\n") != std::string::npos);
  CHECK(text.find("different sessions") == std::string::npos);  // one session on both sides
  const std::string md = render_comparison_markdown(c);
  CHECK(md.find("| experiment | case | build | A wall | B wall | B / A | p | verdict |") != std::string::npos);
  CHECK(md.find("| 0.008 | **! changed** |") != std::string::npos);
  const json j = comparison_json(c);
  CHECK(j["alpha"] == 0.05);
  CHECK(j["changed"] == 1);
  CHECK(j["flagged"] == 1);
  CHECK(j["different_sessions"] == false);
  CHECK(j["rows"][0]["verdict"] == "changed");
  CHECK(j["rows"][0]["p_value"].get<double>() == Approx(2.0 / 252));
  CHECK(j["rows"][0]["significance"]["exact"] == true);
  CHECK(j["rows"][1]["verdict"] == "no_change");
  CHECK(j["rows"][1]["verdict_text"] == "no significant change");
}

TEST_CASE("compare: two sessions are named, with the drift they carry", "[report][compare][significance]") {
  auto a = session(kStartA, {100, 101, 99, 100, 102});
  auto b = session(kStartB, {100, 101, 99, 100, 102});
  Comparison c = compare_runs(a, b, {});
  CHECK(c.different_sessions());
  const std::string text = render_comparison_text(c);
  CHECK(text.find("A and B come from different sessions (A: vm, started 2026-05-28 20:26:40 UTC; "
                  "B: vm, started 2026-05-28 20:31:40 UTC)") != std::string::npos);
  CHECK(text.find("±20 %") != std::string::npos);
  CHECK(text.find("gilhost run X.toml -p 3.12 -p 3.13") != std::string::npos);
  CHECK(text.find("within one session runs pair by round") != std::string::npos);
  CHECK(text.find("different machines") == std::string::npos);
  CHECK(comparison_json(c)["different_sessions"] == true);
  CHECK(render_comparison_markdown(c).find("> **Note:** A and B come from different sessions") != std::string::npos);

  auto other_host = session(kStartB, {100, 101, 99, 100, 102}, "vm2");
  CHECK(render_comparison_text(compare_runs(a, other_host, {})).find("on different machines") != std::string::npos);
  // A file against itself, or files that share a session, are one session.
  CHECK_FALSE(compare_runs(a, a, {}).different_sessions());
  auto both = a;
  both.insert(both.end(), b.begin(), b.end());
  CHECK_FALSE(compare_runs(both, b, {}).different_sessions());
}

TEST_CASE("compare --fail-on-change through cmd_compare: significant changes only", "[report][compare][significance]") {
  gilhost_test::TempDir dir;
  const std::string base = (dir / "base.jsonl").string(), slower = (dir / "slower.jsonl").string(),
                    few = (dir / "few.jsonl").string(), few_slower = (dir / "few_slower.jsonl").string(),
                    out = (dir / "out.json").string();
  write_file(base, session(kStartA, {100, 102, 98, 101, 99}));
  write_file(slower, session(kStartB, {130, 128, 133, 131, 129}));
  write_file(few, session(kStartA, {100, 101, 99}));
  write_file(few_slower, session(kStartB, {200, 202, 198}));

  CompareOptionsCli o;
  o.format = "json";
  o.output = out;
  o.fail_on_change = true;
  o.a = base;
  o.b = slower;
  CHECK(cmd_compare(o) == 1);  // 1.3x over 5 + 5 runs, p 0.008
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  const json j = json::parse(ss.str());
  CHECK(j["changed"] == 1);
  CHECK(j["different_sessions"] == true);
  CHECK(j["note"].get<std::string>().find("different sessions") != std::string::npos);

  o.b = base;
  CHECK(cmd_compare(o) == 0);  // itself
  o.a = few;
  o.b = few_slower;
  CHECK(cmd_compare(o) == 0);  // 2x, but 3 + 3 runs cannot tell
  o.options.threshold_pct = 50;
  o.a = base;
  o.b = slower;
  CHECK(cmd_compare(o) == 0);  // significant, but within 50 %
  o.fail_on_change = false;
  o.options.threshold_pct = 10;
  CHECK(cmd_compare(o) == 0);  // without the flag, a change is no failure
}
