// Issue 19 (timing): when a cell stops repeating, failures' causes, the stderr file's name, the script's
// timer labelled, the `setup` and `cell_budget` keys.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/loader.hpp"
#include "helpers.hpp"
#include "report/failures.hpp"
#include "report/metrics.hpp"
#include "results/record_json.hpp"
#include "run/cell_stop.hpp"
#include "run/plan.hpp"
#include "run/stderr_file.hpp"

using namespace gilhost;

namespace {

RunRecord run(const std::string& c, double seconds, RunStatus status = RunStatus::ok, bool warmup = false) {
  RunRecord r;
  r.case_name = c;
  r.interpreter = "3.12.1";
  r.parent_wall_ns = static_cast<std::int64_t>(seconds * 1e9);
  r.status = status;
  r.warmup = warmup;
  return r;
}

}  // namespace

TEST_CASE("a cell stops once its runs spent the budget, keeping one measured run", "[unit][answer-timing]") {
  CellStops stops(3.0, false);
  CHECK(stops.after(run("a", 1.6), 10).empty());
  CHECK_FALSE(stops.skip("a", "3.12.1", false));
  const std::string why = stops.after(run("a", 1.6), 10);
  CHECK(why.rfind("budget: 2 of 10 runs: the cell's time budget of 3 s was spent", 0) == 0);
  CHECK(stops.skip("a", "3.12.1", false));
  CHECK_FALSE(stops.skip("b", "3.12.1", false));  // another cell goes on

  CellStops slow_warmup(3.0, false);
  CHECK(slow_warmup.after(run("a", 5, RunStatus::ok, true), 3).empty());
  CHECK(slow_warmup.skip("a", "3.12.1", true));    // no more warm-ups
  CHECK_FALSE(slow_warmup.skip("a", "3.12.1", false));  // but the first measured run
  CHECK_FALSE(slow_warmup.after(run("a", 5), 3).empty());

  CellStops none(0, false);  // 0: no budget
  CHECK(none.after(run("a", 100), 3).empty());
  CHECK(none.after(run("a", 100), 3).empty());
  CHECK(none.after(run("a", 100), 3).empty());  // the last planned run: nothing left to stop
}

TEST_CASE("a cell that failed in every run of its first round is not repeated, unless asked", "[unit][answer-timing]") {
  CellStops stops(0, false);
  CHECK(stops.after(run("a", 0.1, RunStatus::error), 3) ==
        "not repeated: failed in every run of the first round (--repeat-failures to repeat)");
  CellStops ok_first(0, false);
  CHECK(ok_first.after(run("a", 0.1), 3).empty());
  CHECK(ok_first.after(run("a", 0.1, RunStatus::error), 3).empty());  // not every run failed
  CellStops repeat(0, true);
  CHECK(repeat.after(run("a", 0.1, RunStatus::error), 3).empty());
}

TEST_CASE("a failed run's cause: the exception, a timeout with its time, a signal by name", "[unit][answer-timing]") {
  RunRecord e = run("a", 0.2, RunStatus::error);
  e.error = RunError{"KeyError", "builtins.KeyError", "'missing-key'"};
  CHECK(failure_cause(e) == "KeyError: 'missing-key'");
  RunRecord t = run("a", 2.04, RunStatus::timeout);
  t.note = "killed after the 2 s timeout";
  CHECK(failure_cause(t) == "timed out after 2.0 s (killed after the 2 s timeout)");
  RunRecord s = run("a", 0.5, RunStatus::crashed);
  s.signal = 11;
  CHECK(failure_cause(s).rfind("killed by SIGSEGV after 0.5 s", 0) == 0);
}

TEST_CASE("failed cells count their measured runs and keep the traceback's last lines", "[unit][answer-timing]") {
  RunRecord bad = run("a", 0.1, RunStatus::error);
  bad.wall_ns = 90000000;  // raised in the case: it ran (an error with no wall time never started)
  bad.error = RunError{"KeyError", "", "'k'"};
  bad.stderr_text = "Traceback (most recent call last):\n  1\n  2\n  3\n  4\n  5\n\n  6\nKeyError: 'k'\n";
  bad.stderr_file = "r.jsonl.stderr/a@3.12.1-1.txt";
  bad.stopped = "not repeated";
  const CellFailures f = collect_failures({run("a", 0.1), bad, run("b", 0.1)});
  REQUIRE(f.failed.size() == 1);
  CHECK(f.failed[0].failed == 1);
  CHECK(f.failed[0].runs == 2);
  CHECK(f.failed[0].traceback == std::vector<std::string>{"  2", "  3", "  4", "  5", "  6", "KeyError: 'k'"});
  REQUIRE(f.stopped.size() == 1);
  const std::string text = failures_text(f);
  CHECK(text.find("a @ 3.12.1 (1 of 2 runs failed): KeyError: 'k'") != std::string::npos);
  CHECK(text.find("full stderr: r.jsonl.stderr/a@3.12.1-1.txt") != std::string::npos);
  CHECK(failures_html(f).find("<details>") != std::string::npos);
  CHECK(failures_json(f)["failed"][0]["cause"] == "KeyError: 'k'");
}

TEST_CASE("the stderr file's name is the cell and round, safe as a file name", "[unit][answer-timing]") {
  RunRecord r = run("threads[workers=8]", 0.1);
  r.interpreter = "3.14.7t (/opt/py/bin/python)";
  r.round = 2;
  CHECK(stderr_file_name(r) == "threads_workers=8_@3.14.7t___opt_py_bin_python_-2.txt");
}

TEST_CASE("a run record keeps why its cell stopped and where its stderr went", "[unit][answer-timing]") {
  RunRecord r = run("a", 0.1, RunStatus::error);
  r.experiment = "x";
  r.stopped = "2 of 5 runs: the cell's time budget of 20 s was spent";
  r.stderr_file = "R.jsonl.stderr/a@3.12.1-0.txt";
  const RunRecord back = run_from_json(to_json(ResultsLine{r}));
  CHECK(back.stopped == r.stopped);
  CHECK(back.stderr_file == r.stderr_file);
  CHECK_FALSE(to_json(ResultsLine{run("a", 0.1)}).contains("stopped"));
}

TEST_CASE("a script's own timer is labelled as such", "[unit][answer-timing]") {
  CHECK(figure_label("wall_s") == "wall_s (the script's own timer)");
  CHECK(figure_label("per_thread_wall_s") == "per_thread_wall_s (the script's own timer)");
  CHECK(figure_label("parallelism") == "parallelism");
}

TEST_CASE("setup and cell_budget are read from the experiment file", "[unit][answer-timing]") {
  gilhost_test::TempDir dir;
  gilhost_test::write_file(dir / "s.py", "def f():\n    pass\n");
  const std::string path = (dir / "s.toml").string();
  const Experiment ex = load_experiment_text(
      "[experiment]\nname = \"s\"\nscript = \"s.py\"\ncell_budget = 0\n[[case]]\nname = \"c\"\ncall = \"f\"\nsetup = \"g\"\n",
      path, "");
  CHECK(ex.cell_budget_s == 0);
  REQUIRE(ex.cases.size() == 1);
  CHECK(ex.cases[0].setup == "g");
  Interpreter in;
  CHECK(runner_spec(ex.cases[0], in).setup == "g");
  CHECK(RunnerSpec::from_text(runner_spec(ex.cases[0], in).to_json().dump()).setup == "g");
  const Experiment defaults = load_experiment_text("[experiment]\nname = \"s\"\nscript = \"s.py\"\n[[case]]\nname = \"c\"\ncall = \"f\"\n", path, "");
  CHECK(defaults.cell_budget_s == 20);
  CHECK_THROWS_AS(load_experiment_text("[experiment]\nname = \"s\"\nscript = \"s.py\"\n[[case]]\nname = \"c\"\nmain = true\nsetup = \"g\"\n", path, ""),
                  ConfigErrors);
}
