// config/loader: experiment files from inline TOML, and the errors (with file:line:column) of bad ones.
#include <catch2/catch.hpp>

#include <cmath>

#include <algorithm>
#include <string>
#include <vector>

#include "config/loader.hpp"
#include "helpers.hpp"
#include "run/plan.hpp"

using gilhost::Case;
using gilhost::ConfigError;
using gilhost::ConfigErrors;
using gilhost::Experiment;
using gilhost::load_experiment_text;
using gilhost_test::TempDir;
using gilhost_test::write_file;

namespace {

// A folder holding the scripts experiment files name; the TOML itself is given as text.
struct Sandbox {
  TempDir dir;
  std::string toml_path;
  Sandbox() : toml_path((dir / "exp.toml").string()) {
    write_file(dir / "race.py", "def run(**kw):\n    return kw\n");
    write_file(dir / "other.py", "print('hello')\n");
  }
  Experiment load(const std::string& text, const std::string& profile = "") const {
    return load_experiment_text(text, toml_path, profile);
  }
  // The errors a bad file raises; fails the test when it loads.
  std::vector<ConfigError> errors(const std::string& text, const std::string& profile = "") const {
    try {
      load_experiment_text(text, toml_path, profile);
    } catch (const ConfigErrors& e) {
      REQUIRE_FALSE(e.errors().empty());
      for (const auto& err : e.errors()) UNSCOPED_INFO(err.str());
      return e.errors();
    }
    FAIL("the file loaded without errors");
    return {};
  }
};

const Case& find(const Experiment& ex, const std::string& name) {
  const Case* c = ex.find_case(name);
  if (!c) FAIL("no case named " << name);
  return *c;
}

std::vector<std::string> names(const Experiment& ex) {
  std::vector<std::string> out;
  for (const auto& c : ex.cases) out.push_back(c.name);
  return out;
}

// The one error whose message contains `needle`.
ConfigError only_error(const std::vector<ConfigError>& errors, const std::string& needle) {
  std::vector<ConfigError> hits;
  for (const auto& e : errors)
    if (e.message.find(needle) != std::string::npos) hits.push_back(e);
  INFO("looking for an error containing: " << needle);
  REQUIRE(hits.size() == 1);
  return hits[0];
}

void check_at(const ConfigError& e, const std::string& file, int line, int column) {
  INFO(e.str());
  CHECK(e.where.file == file);
  CHECK(e.where.line == line);
  CHECK(e.where.column == column);
  CHECK(e.str().rfind(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": error: ", 0) == 0);
}

// Lines numbered from 1 at the first line of the raw string.
const char* const kValid = R"([experiment]
name = "demo"
description = "a valid file"
script = "race.py"
interpreters = ["3.12", "ft"]
repeat = 2
warmup = 1
timeout = 12.5
sample_interval_ms = 7
baseline = "plain"
env = { PYTHONHASHSEED = "0" }

[experiment.article]
plain = "3.9: 1492419"

[params]
n = 100
threads = 4
label = "base"

[profile.quick]
repeat = 1
warmup = 0
timeout = 3
params = { n = 10, label = "quick" }
cases = ["plain", "threads", "spawn", "prec"]

[profile.full]
repeat = 5

[[case]]
name = "plain"
call = "run"
params = { threads = 8 }
show = "counter"

[[case]]
name = "threads"
call = "run"
params = { label = "case" }
sweep = { workers = [1, 2, 4] }

[[case]]
name = "grid"
call = "run"
sweep = { b = ["x", "y", "z"], a = [1, 2] }

[[case]]
name = "spawn"
main = true
argv = ["--n", "{n}", "--label={label}", "-t{threads}", "{literal"]
script = "other.py"

[[case]]
name = "sub"
call = "run"
sweep = { subinterpreters = [1, 4] }
gil = "shared"

[[case]]
name = "prec"
call = "run"
params = { n = 1, label = "case" }
sweep = { n = [5, 6] }
  [[case.expect]]
  python = ">=3.10,<3.13"
  free_threaded = false
  gil = true
  key = "counter"
  result_lt = 4000000
  note = "the race loses updates"
)";

}  // namespace

TEST_CASE("loader: a valid file, no profile", "[config][loader]") {
  Sandbox sb;
  Experiment ex = sb.load(kValid);

  CHECK(ex.name == "demo");
  CHECK(ex.description == "a valid file");
  CHECK(ex.path == sb.toml_path);
  CHECK(ex.script == (sb.dir / "race.py").string());
  CHECK(ex.interpreters == std::vector<std::string>{"3.12", "ft"});
  CHECK(ex.repeat == 2);
  CHECK(ex.warmup == 1);
  CHECK(ex.timeout_s == Approx(12.5));
  CHECK(ex.sample_interval_ms == 7);
  CHECK(ex.baseline == "plain");
  CHECK(ex.env == std::map<std::string, std::string>{{"PYTHONHASHSEED", "0"}});
  CHECK(ex.article == nlohmann::json{{"plain", "3.9: 1492419"}});
  CHECK(ex.profile.empty());
  CHECK(ex.profile_names == std::vector<std::string>{"full", "quick"});

  // Sweeps expand in file order; several keys give the cartesian product (keys in name order).
  CHECK(names(ex) == std::vector<std::string>{
                         "plain", "threads[workers=1]", "threads[workers=2]", "threads[workers=4]",
                         "grid[a=1,b=x]", "grid[a=1,b=y]", "grid[a=1,b=z]", "grid[a=2,b=x]", "grid[a=2,b=y]",
                         "grid[a=2,b=z]", "spawn", "sub[subinterpreters=1]", "sub[subinterpreters=4]", "prec[n=5]",
                         "prec[n=6]"});

  const Case& plain = find(ex, "plain");
  CHECK(plain.base_name == "plain");
  CHECK(plain.mode == gilhost::CaseMode::call);
  CHECK(plain.function == "run");
  CHECK(plain.script == ex.script);
  CHECK(plain.show == "counter");
  CHECK(plain.sweep_values == nlohmann::json::object());
  CHECK(plain.subinterpreters == 0);
  CHECK(plain.gil == gilhost::SubinterpreterGil::own);
  // Case params over [params].
  CHECK(plain.params == nlohmann::json{{"n", 100}, {"threads", 8}, {"label", "base"}});
  CHECK(plain.where.line == 31);
  CHECK(plain.where.column == 1);

  const Case& t2 = find(ex, "threads[workers=2]");
  CHECK(t2.base_name == "threads");
  CHECK(t2.sweep_values == nlohmann::json{{"workers", 2}});
  CHECK(t2.params == nlohmann::json{{"n", 100}, {"threads", 4}, {"label", "case"}, {"workers", 2}});

  const Case& grid = find(ex, "grid[a=2,b=y]");
  CHECK(grid.sweep_values == nlohmann::json{{"a", 2}, {"b", "y"}});
  CHECK(grid.params["a"] == 2);
  CHECK(grid.params["b"] == "y");

  const Case& spawn = find(ex, "spawn");
  CHECK(spawn.mode == gilhost::CaseMode::main);
  CHECK(spawn.function.empty());
  CHECK(spawn.script == (sb.dir / "other.py").string());
  // {name} is replaced by the param (strings bare, numbers as JSON); a lone "{" stays as written.
  CHECK(spawn.argv == std::vector<std::string>{"--n", "100", "--label=base", "-t4", "{literal"});

  const Case& sub1 = find(ex, "sub[subinterpreters=1]");
  const Case& sub4 = find(ex, "sub[subinterpreters=4]");
  CHECK(sub1.subinterpreters == 1);
  CHECK(sub4.subinterpreters == 4);
  CHECK(sub4.gil == gilhost::SubinterpreterGil::shared);

  // A swept value beats the case's own params.
  const Case& prec = find(ex, "prec[n=6]");
  CHECK(prec.params["n"] == 6);
  CHECK(prec.params["label"] == "case");
  REQUIRE(prec.expects.size() == 1);
  const auto& e = prec.expects[0];
  REQUIRE(e.python);
  CHECK(e.python->text() == ">=3.10,<3.13");
  CHECK(e.free_threaded == false);
  CHECK(e.gil == true);
  CHECK(e.key == "counter");
  REQUIRE(e.result_checks.size() == 1);
  CHECK(e.result_checks[0].first == gilhost::CompareOp::lt);
  CHECK(e.result_checks[0].second == 4000000);
  CHECK(e.note == "the race loses updates");
  CHECK_FALSE(e.constrains_status());
  CHECK(e.where.line == 65);
  CHECK(e.where.column == 3);
}

TEST_CASE("loader: a profile overrides settings, params and the case list", "[config][loader]") {
  Sandbox sb;
  Experiment ex = sb.load(kValid, "quick");

  CHECK(ex.profile == "quick");
  CHECK(ex.repeat == 1);
  CHECK(ex.warmup == 0);
  CHECK(ex.timeout_s == Approx(3.0));
  CHECK(ex.params == nlohmann::json{{"n", 10}, {"threads", 4}, {"label", "quick"}});
  // Only the profile's cases, each with all of its sweep expansions, in file order.
  CHECK(names(ex) == std::vector<std::string>{"plain", "threads[workers=1]", "threads[workers=2]",
                                              "threads[workers=4]", "spawn", "prec[n=5]", "prec[n=6]"});

  // [params] < case params < profile params < sweep values.
  const Case& plain = find(ex, "plain");
  CHECK(plain.params == nlohmann::json{{"n", 10}, {"threads", 8}, {"label", "quick"}});
  const Case& t4 = find(ex, "threads[workers=4]");
  CHECK(t4.params == nlohmann::json{{"n", 10}, {"threads", 4}, {"label", "quick"}, {"workers", 4}});
  const Case& prec = find(ex, "prec[n=5]");
  CHECK(prec.params["n"] == 5);
  CHECK(prec.params["label"] == "quick");
  // argv sees the merged params.
  CHECK(find(ex, "spawn").argv == std::vector<std::string>{"--n", "10", "--label=quick", "-t4", "{literal"});

  Experiment full = sb.load(kValid, "full");
  CHECK(full.repeat == 5);
  CHECK(full.warmup == 1);       // not in the profile: the file's value
  CHECK(full.cases.size() == 15);  // no case list: every case
}

TEST_CASE("loader: defaults of a minimal file", "[config][loader]") {
  Sandbox sb;
  Experiment ex = sb.load("[experiment]\nscript = \"race.py\"\n[[case]]\nname = \"only\"\ncall = \"run\"\n");
  CHECK(ex.name == "exp");  // the file's stem
  CHECK(ex.interpreters == std::vector<std::string>{"all"});
  CHECK(ex.repeat == 3);
  CHECK(ex.warmup == 0);
  CHECK(ex.params == nlohmann::json::object());
  REQUIRE(ex.cases.size() == 1);
  CHECK(ex.cases[0].name == "only");
  CHECK(ex.cases[0].params == nlohmann::json::object());
  CHECK(ex.cases[0].expects.empty());
}

TEST_CASE("loader: a TOML syntax error names its position", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors("[experiment]\nscript = \"race.py\"\nrepeat = = 3\n");
  REQUIRE(errors.size() == 1);
  check_at(errors[0], sb.toml_path, 3, 10);
}

TEST_CASE("loader: an unknown key is an error at the key", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"
repat = 3

[[case]]
name = "a"
  cal = "run"
)");
  auto top = only_error(errors, "unknown key 'repat'");
  check_at(top, sb.toml_path, 3, 1);
  CHECK_THAT(top.message, Catch::Matchers::Contains("[experiment]") && Catch::Matchers::Contains("repeat"));
  auto in_case = only_error(errors, "unknown key 'cal'");
  check_at(in_case, sb.toml_path, 7, 3);
  CHECK_THAT(in_case.message, Catch::Matchers::Contains("[[case]]"));

  auto root = sb.errors("[experiment]\nscript = \"race.py\"\n[[case]]\nname = \"a\"\ncall = \"run\"\n[paramz]\nn = 1\n");
  check_at(only_error(root, "unknown key 'paramz'"), sb.toml_path, 6, 2);
}

TEST_CASE("loader: a missing script is an error at its value", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "nope.py"

[[case]]
name = "a"
call = "run"

[[case]]
name = "b"
call = "run"
script =   "../missing/other.py"
)");
  auto top = only_error(errors, "nope.py");
  CHECK_THAT(top.message, Catch::Matchers::StartsWith("script not found: "));
  CHECK_THAT(top.message, Catch::Matchers::Contains((sb.dir / "nope.py").string()));
  check_at(top, sb.toml_path, 2, 10);
  auto per_case = only_error(errors, "other.py");
  check_at(per_case, sb.toml_path, 11, 12);
  CHECK_THAT(per_case.message, Catch::Matchers::Contains((sb.dir.path().parent_path() / "missing/other.py").string()));
}

TEST_CASE("loader: call and main are exclusive, and one of them is needed", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"

[[case]]
name = "both"
call = "run"
main = true

[[case]]
name = "neither"
)");
  check_at(only_error(errors, "case 'both': give either"), sb.toml_path, 4, 1);
  check_at(only_error(errors, "case 'neither': say what to run"), sb.toml_path, 9, 1);
}

TEST_CASE("loader: a bad gil value", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"
[[case]]
name = "a"
call = "run"
subinterpreters = 2
gil = "mine"
)");
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0].message, Catch::Matchers::Contains("gil must be"));
  check_at(errors[0], sb.toml_path, 7, 7);
}

TEST_CASE("loader: errors in [[case.expect]]", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"
[[case]]
name = "a"
call = "run"
[[case.expect]]
python = "3.x"
result = 1
[[case.expect]]
python = ">=3.10"
free_threaded = true
[[case.expect]]
result_lt = "big"
[[case.expect]]
gil = "shared"
status = "ok"
)");
  auto spec = only_error(errors, "bad version spec '3.x'");
  check_at(spec, sb.toml_path, 7, 10);
  check_at(only_error(errors, "this expectation checks nothing"), sb.toml_path, 9, 1);
  check_at(only_error(errors, "'result_lt' compares numbers"), sb.toml_path, 13, 13);
  // The condition is a bool, not the case's own `gil = "own" | "shared"`.
  check_at(only_error(errors, "'gil' must be true or false"), sb.toml_path, 15, 7);
  CHECK(errors.size() == 4);
}

TEST_CASE("loader: an unknown profile", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(kValid, "slow");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "no profile 'slow' in this file (it has: full, quick)");
  check_at(errors[0], sb.toml_path, 1, 1);
}

TEST_CASE("loader: a profile naming an unknown case", "[config][loader][errors]") {
  Sandbox sb;
  const std::string text = R"([experiment]
script = "race.py"
[profile.quick]
repeat = 1
cases = ["a", "typo"]
[[case]]
name = "a"
call = "run"
)";
  auto errors = sb.errors(text);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "profile 'quick' names unknown case 'typo'");
  check_at(errors[0], sb.toml_path, 5, 15);
  // Applying that profile reports the same problem once, not twice.
  auto applied = sb.errors(text, "quick");
  REQUIRE(applied.size() == 1);
  CHECK(applied[0].message == errors[0].message);
  check_at(applied[0], sb.toml_path, 5, 15);
}

TEST_CASE("loader: an argv placeholder with no param", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"
[params]
n = 1
[[case]]
name = "m"
main = true
argv = ["{n}", "{missing}"]
sweep = { x = [1, 2, 3] }
)");
  // One error, not one per sweep expansion.
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "argv uses {missing} but no param has that name");
  check_at(errors[0], sb.toml_path, 8, 8);
}

TEST_CASE("loader: duplicate case names", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"
[[case]]
name = "same"
call = "run"

[[case]]
name = "other"
call = "run"

[[case]]
name = "same"
call = "run"
)");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "duplicate case name 'same'");
  check_at(errors[0], sb.toml_path, 11, 1);
}

TEST_CASE("loader: a sweep with an empty array", "[config][loader][errors]") {
  Sandbox sb;
  auto errors = sb.errors(R"([experiment]
script = "race.py"
[[case]]
name = "s"
call = "run"
sweep = { workers = [], n = [1] }
)");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "sweep.workers must be a non-empty array of values");
  check_at(errors[0], sb.toml_path, 6, 21);
}

TEST_CASE("loader: every error of a file is reported at once", "[config][loader][errors]") {
  Sandbox sb;
  try {
    sb.load(R"([experiment]
script = "race.py"
repeat = 0
warmup = "none"
[[case]]
name = "a"
call = "run"
subinterpreters = 0
)");
    FAIL("loaded");
  } catch (const ConfigErrors& e) {
    REQUIRE(e.errors().size() == 3);
    check_at(e.errors()[0], sb.toml_path, 3, 10);
    check_at(e.errors()[1], sb.toml_path, 4, 10);
    check_at(e.errors()[2], sb.toml_path, 8, 19);
    // what() holds one line per error.
    std::string what = e.what();
    CHECK(std::count(what.begin(), what.end(), '\n') == 2);
    CHECK_THAT(what, Catch::Matchers::Contains("'repeat' must be from 1 to 100000"));
  }
}

TEST_CASE("loader: a case's requires skips it on other builds, with its reason", "[config][loader][plan]") {
  Sandbox sb;
  const std::string head = "[experiment]\nscript = \"race.py\"\n[[case]]\nname = \"pool\"\ncall = \"run\"\n";
  const Experiment ex =
      sb.load(head + "requires = { python = \">=3.14\", because = \"InterpreterPoolExecutor is new in 3.14\" }\n"
                     "[[case]]\nname = \"always\"\ncall = \"run\"\n");
  const Case& pool = find(ex, "pool");
  REQUIRE(pool.requires.python);
  CHECK(pool.requires.python->text() == ">=3.14");
  CHECK(ex.to_json()["cases"][0]["requires"]["python"] == ">=3.14");

  std::vector<gilhost::Interpreter> builds(2);
  builds[0].version = gilhost::Version{3, 13, 5};
  builds[0].label = "3.13.5";
  builds[1].version = gilhost::Version{3, 14, 7};
  builds[1].label = "3.14.7";
  for (auto& b : builds) b.shared = true;
  const gilhost::Plan plan = gilhost::plan_runs(ex, builds);
  REQUIRE(plan.skipped.size() == 1);
  CHECK(plan.skipped[0].label == "3.13.5");
  CHECK(plan.skipped[0].reason == "needs Python >=3.14: InterpreterPoolExecutor is new in 3.14");
  std::vector<std::string> planned;
  for (const auto& run : plan.runs) planned.push_back(run.c->name + "@" + run.interp->label);
  CHECK(std::count(planned.begin(), planned.end(), "pool@3.14.7") == ex.repeat);
  CHECK(std::count(planned.begin(), planned.end(), "pool@3.13.5") == 0);
  CHECK(std::count(planned.begin(), planned.end(), "always@3.13.5") == ex.repeat);

  // A bad spec and an unknown key are errors at their place.
  check_at(only_error(sb.errors(head + "requires = { python = \"newest\" }\n"), "newest"), sb.toml_path, 6, 23);
  check_at(only_error(sb.errors(head + "requires = { gil = true }\n"), "unknown key 'gil'"), sb.toml_path, 6, 14);
}

TEST_CASE("loader: --param values are typed as TOML types them, bare words are text", "[config][loader][overrides]") {
  using gilhost::parse_param_override;
  CHECK(parse_param_override("n=5").second == 5);
  CHECK(parse_param_override("n=5").second.is_number_integer());
  CHECK(parse_param_override("ratio=2.5").second == 2.5);
  CHECK(parse_param_override("fast=true").second == true);
  CHECK(parse_param_override("sizes=[1, 2]").second == nlohmann::json::array({1, 2}));
  CHECK(parse_param_override("mode=threads").second == "threads");
  CHECK(parse_param_override("mode=\"threads\"").second == "threads");
  CHECK(parse_param_override("big=1_000_000").second == 1000000);
  CHECK(parse_param_override("name=Ünïcode §").second == "Ünïcode §");
  CHECK(parse_param_override(" key = 3").first == "key");
  CHECK_THROWS_AS(parse_param_override("novalue"), std::invalid_argument);
  CHECK_THROWS_AS(parse_param_override("=5"), std::invalid_argument);
}

TEST_CASE("loader: --param overrides params and the profile's, --case keeps matching cases", "[config][loader][overrides]") {
  Sandbox sb;
  const std::string text = R"([experiment]
script = "race.py"
[params]
n = 10
mode = "a"
[profile.quick]
params = { n = 1 }
[[case]]
name = "threads"
call = "run"
sweep = { workers = [1, 2] }
[[case]]
name = "plain"
call = "run"
params = { n = 20 }
)";
  gilhost::LoadOptions o;
  o.profile = "quick";
  o.params = {{"n", 7}, {"workers", 9}, {"extra", "x"}};
  const Experiment ex = gilhost::load_experiment_text(text, sb.toml_path, o);
  CHECK(find(ex, "plain").params["n"] == 7);  // over the case's own and the profile's
  CHECK(find(ex, "plain").params["extra"] == "x");
  // --param over a swept key replaces the sweep: the case runs once, named by the value given.
  CHECK(names(ex) == std::vector<std::string>{"threads[workers=9]", "plain"});
  CHECK(find(ex, "threads[workers=9]").params["workers"] == 9);
  CHECK(find(ex, "threads[workers=9]").sweep_values["workers"] == 9);
  // A view of a swept case that the --param took away is left out (io_bound's views of n=100 under
  // --param n=1000 were errors); one of a case that still exists stays.
  const std::string viewed = text +
                             "[[view]]\nkind = \"ratio\"\na = \"threads[workers=2]\"\nb = \"plain\"\n"
                             "[[view]]\nkind = \"ratio\"\na = \"threads[workers=9]\"\nb = \"plain\"\n";
  const Experiment kept = gilhost::load_experiment_text(viewed, sb.toml_path, o);
  REQUIRE(kept.views.size() == 1);
  CHECK(kept.views[0].a == "threads[workers=9]");
  CHECK_THROWS_AS(gilhost::load_experiment_text(viewed, sb.toml_path, gilhost::LoadOptions()), gilhost::ConfigErrors);
  o.params = {{"n", 7}};  // a key the sweep does not name: it still sweeps
  CHECK(names(gilhost::load_experiment_text(text, sb.toml_path, o)) ==
        std::vector<std::string>{"threads[workers=1]", "threads[workers=2]", "plain"});
  CHECK(ex.to_json()["param_overrides"]["n"] == 7);
  // NaN and infinities (TOML nan, inf) are written tagged wherever the file holds the case's values: JSON
  // text has no literal for them, and dump() would write null.
  o.params = {{"n", std::nan("")}, {"workers", HUGE_VAL}};
  const nlohmann::json tagged = gilhost::load_experiment_text(text, sb.toml_path, o).to_json();
  CHECK(tagged["param_overrides"]["n"] == nlohmann::json({{"$float", "nan"}}));
  CHECK(tagged["param_overrides"]["workers"] == nlohmann::json({{"$float", "inf"}}));
  CHECK(tagged["params"]["n"] == nlohmann::json({{"$float", "nan"}}));
  CHECK(tagged["cases"][1]["name"] == "plain");
  CHECK(tagged["cases"][1]["params"]["n"] == nlohmann::json({{"$float", "nan"}}));
  CHECK(tagged["cases"][1]["params"]["workers"] == nlohmann::json({{"$float", "inf"}}));

  o = gilhost::LoadOptions();
  o.case_globs = {"thr*"};
  CHECK(names(gilhost::load_experiment_text(text, sb.toml_path, o)) ==
        std::vector<std::string>{"threads[workers=1]", "threads[workers=2]"});
  o.case_globs = {"*workers=2*", "plain"};
  const Experiment some = gilhost::load_experiment_text(text, sb.toml_path, o);
  CHECK(names(some) == std::vector<std::string>{"threads[workers=2]", "plain"});
  CHECK(some.to_json()["case_globs"].size() == 2);
  o.case_globs = {"nothing*"};
  try {
    gilhost::load_experiment_text(text, sb.toml_path, o);
    FAIL("loaded");
  } catch (const ConfigErrors& e) {
    CHECK(e.errors().front().message == "--case 'nothing*' matches no case (its cases: threads, plain)");
  }
}
