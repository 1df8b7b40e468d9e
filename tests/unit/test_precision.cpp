// Issue 24, the precision target: its value as written, the file key, when a cell stops adding rounds
// and which cells the next round holds.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/loader.hpp"
#include "config/precision.hpp"
#include "helpers.hpp"
#include "report/failures.hpp"
#include "run/cell_stop.hpp"
#include "run/plan.hpp"
#include "run/precision.hpp"
#include "run/progress.hpp"

using namespace gilhost;
using gilhost_test::TempDir;
using gilhost_test::write_file;

namespace {

RunRecord run(const std::string& c, double wall_s, RunStatus status = RunStatus::ok) {
  RunRecord r;
  r.case_name = c;
  r.interpreter = "3.12.1";
  r.wall_ns = static_cast<std::int64_t>(wall_s * 1e9);
  r.parent_wall_ns = r.wall_ns;
  r.status = status;
  return r;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Feeds `walls` to `stops` as one cell's measured runs; the stop texts, one per run.
std::vector<std::string> feed(CellStops& stops, const std::string& c, const std::vector<double>& walls, int planned) {
  std::vector<std::string> out;
  for (double w : walls) out.push_back(stops.after(run(c, w), planned));
  return out;
}

}  // namespace

TEST_CASE("precision: a percentage, a fraction or off; anything else says what to write", "[unit][precision]") {
  std::string why;
  CHECK(*parse_precision("3%", why) == Approx(0.03));
  CHECK(*parse_precision(" 2.5 % ", why) == Approx(0.025));
  CHECK(*parse_precision("0.03", why) == Approx(0.03));
  CHECK(*parse_precision("0", why) == 0.0);
  CHECK(*parse_precision("off", why) == 0.0);
  CHECK_FALSE(parse_precision("3", why));  // 3 would be ±300 %: the percentage was meant
  CHECK(why.find("3%") != std::string::npos);
  CHECK_FALSE(parse_precision("-1%", why));
  CHECK_FALSE(parse_precision("80%", why));
  CHECK_FALSE(parse_precision("soon", why));
  CHECK_FALSE(parse_precision("3%%", why));
  CHECK(precision_text(0.03) == "±3 %");
  CHECK(precision_text(0.0214) == "±2.14 %");
  CHECK(runs_for_an_interval() == 6);
}

TEST_CASE("precision key: top level and in profiles; a count written without it is run exactly", "[unit][precision]") {
  TempDir dir;
  write_file(dir / "s.py", "def f():\n    return 1\n");
  const std::string path = (dir / "e.toml").string();
  const std::string cases = "[[case]]\nname = \"a\"\ncall = \"f\"\n";
  auto load = [&](const std::string& experiment, const std::string& profile = "") {
    return load_experiment_text("[experiment]\nscript = \"s.py\"\n" + experiment + cases, path, profile);
  };
  CHECK(load("").precision_target() == Approx(kDefaultPrecision));    // the default
  CHECK(load("repeat = 3\n").precision_target() == 0.0);               // a count asked for
  CHECK(load("repeat = 3\nprecision = \"2%\"\n").precision_target() == Approx(0.02));  // a minimum, then
  CHECK(load("precision = 0.1\n").precision_target() == Approx(0.1));
  CHECK(load("precision = \"off\"\n").precision_target() == 0.0);
  CHECK(load("precision = 0\n").precision_target() == 0.0);
  const std::string profiles = "[profile.quick]\nrepeat = 1\n[profile.tight]\nprecision = \"1%\"\n";
  CHECK(load("precision = \"4%\"\n" + profiles, "quick").precision_target() == Approx(0.04));  // the file's stays
  CHECK(load(profiles, "quick").precision_target() == 0.0);  // the profile's count is run exactly
  CHECK(load(profiles, "tight").precision_target() == Approx(0.01));
  CHECK(load("").to_json()["precision"] == Approx(kDefaultPrecision));
  CHECK_FALSE(load("repeat = 2\n").to_json().contains("precision"));  // fixed rounds: as older files read

  try {
    load("precision = \"3\"\n[profile.p]\nprecision = true\n");
    FAIL("a bad precision loaded");
  } catch (const ConfigErrors& e) {
    REQUIRE(e.errors().size() == 2);
    for (const auto& err : e.errors()) {
      INFO(err.str());
      CHECK(err.where.file == path);
      CHECK(err.where.column == 13);  // at the value
      if (err.where.line == 3) CHECK(err.message.find("write 3% or 0.03") != std::string::npos);
      else CHECK((err.where.line == 5 && err.message.find("'precision' must be a percentage") != std::string::npos));
    }
  }
}

TEST_CASE("precision: a steady cell meets the target at 6 runs, a noisy one goes on", "[unit][precision]") {
  CellStops stops(0, false, 0.03);
  const std::vector<std::string> steady = feed(stops, "steady", {1.00, 1.01, 0.99, 1.00, 1.01, 1.00}, 3);
  for (std::size_t i = 0; i < 5; ++i) CHECK(steady[i].empty());  // under 6 runs no interval is 95 %
  CHECK(starts_with(steady[5], "target: ±1 % reached after 6 runs (target ±3 %)"));
  CHECK_FALSE(stops.wants_more("steady", "3.12.1"));

  const std::vector<std::string> noisy = feed(stops, "noisy", {1.0, 1.4, 0.7, 1.2, 0.8, 1.3, 0.9}, 3);
  for (const auto& why : noisy) CHECK(why.empty());
  CHECK(stops.wants_more("noisy", "3.12.1"));
  CHECK_FALSE(stops.wants_more("never-ran", "3.12.1"));
}

TEST_CASE("precision: the budget or the round cap stops a cell short of it, and says so", "[unit][precision]") {
  CellTally t;
  t.measured = 4;
  t.ok_wall_s = {1.0, 1.5, 0.5, 1.2};
  t.spent_s = 4.2;
  CHECK(precision_stop(t, 3, 0.03, 0).empty());  // no budget: it goes on
  const std::string budget = precision_stop(t, 3, 0.03, 4.0);
  CHECK(starts_with(budget, "budget: no 95 % interval after 4 runs (4 of them ok; 6 needed), short of the ±3 % target"));
  CHECK(budget.find("time budget of 4 s was spent (4.2 s") != std::string::npos);

  t.ok_wall_s = std::vector<double>(kMaxPrecisionRounds, 1.0);
  for (std::size_t i = 0; i < t.ok_wall_s.size(); i += 2) t.ok_wall_s[i] = 2.0;  // two modes: no narrowing
  t.measured = kMaxPrecisionRounds;
  const std::string rounds = precision_stop(t, 3, 0.03, 0);
  CHECK(starts_with(rounds, "rounds: ±"));
  CHECK(rounds.find("at most 50 runs") != std::string::npos);
  CHECK(precision_stop(t, 80, 0.03, 0).empty());  // a repeat past the cap is the minimum still

  // Before its planned runs are done the old budget stop holds, now with its prefix.
  CellStops stops(1.0, false, 0.03);
  CHECK(stops.after(run("a", 0.6), 5).empty());
  CHECK(starts_with(stops.after(run("a", 0.6), 5), "budget: 2 of 5 runs: the cell's time budget of 1 s was spent"));
}

TEST_CASE("precision: the next round holds the cells still short of it, in plan order", "[unit][precision]") {
  Experiment ex;
  Case a, b;
  a.name = "a";
  b.name = "b";
  ex.cases = {a, b};
  ex.repeat = 1;
  ex.warmup = 1;
  std::vector<Interpreter> builds(2);
  builds[0].label = "3.12.1";
  builds[1].label = "3.13.0";
  const Plan plan = plan_runs(ex, builds);
  REQUIRE(plan.runs.size() == 8);

  CellStops off(0, false, 0);  // no target: nothing past the plan
  for (const auto& p : plan.runs) {
    RunRecord r = run(p.c->name, 1.0);
    r.interpreter = p.interp->label;
    r.warmup = p.warmup;
    off.after(r, ex.repeat);
  }
  CHECK(precision_round(plan, off, 2, ex.warmup, ex.repeat).empty());

  CellStops stops(0, false, 0.03);
  for (const auto& p : plan.runs) {
    RunRecord r = run(p.c->name, 1.0, p.c->name == "a" && p.interp->label == "3.13.0" ? RunStatus::error : RunStatus::ok);
    r.interpreter = p.interp->label;
    r.warmup = p.warmup;
    stops.after(r, ex.repeat);  // a @ 3.13.0 failed in every run of its first round: stopped
  }
  const std::vector<PlannedRun> next = precision_round(plan, stops, 2, ex.warmup, ex.repeat);
  REQUIRE(next.size() == 3);
  CHECK((next[0].c->name == "a" && next[0].interp->label == "3.12.1"));
  CHECK((next[1].c->name == "b" && next[1].interp->label == "3.12.1"));
  CHECK((next[2].c->name == "b" && next[2].interp->label == "3.13.0"));
  for (const auto& p : next) CHECK((p.round == 2 && p.repeat == 1 && !p.warmup));
  CHECK(precision_round(plan, stops, 1 + kMaxPrecisionRounds, ex.warmup, ex.repeat).empty());  // the cap
}

TEST_CASE("progress line: with a target the count and the ETA are open-ended", "[unit][precision]") {
  Case c;
  c.name = "plain";
  Interpreter interp;
  interp.label = "3.13.0";
  PlannedRun r;
  r.c = &c;
  r.interp = &interp;
  Progress p;
  p.done = 2;
  p.total = 12;
  p.run = &r;
  p.run_elapsed_s = 1;
  p.timeout_s = 120;
  p.elapsed_s = 5;  // 2 s a run, 10 to go
  p.precision = 0.03;
  p.min_rounds = 3;
  CHECK(progress_line(p) == "[3/12+] plain @ 3.13.0  1s of 120s timeout · total 5s, ETA 19s+ (3+ rounds, to ±3 %)");
}

TEST_CASE("report: a cell that met its target is not listed as stopped short", "[unit][precision]") {
  RunRecord met = run("steady", 1.0), short_of = run("noisy", 1.0);
  met.stopped = "target: ±1 % reached after 6 runs (target ±5 %)";
  short_of.stopped = "budget: ±9 % after 11 runs, short of the ±5 % target: the cell's time budget of 20 s was spent";
  const CellFailures f = collect_failures({met, short_of});
  REQUIRE(f.stopped.size() == 1);
  CHECK(f.stopped[0].case_name == "noisy");
}
