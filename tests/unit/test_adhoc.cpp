// config/adhoc: `gilhost run script.py -- ARGS` as the one-case experiment a user would have written.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/adhoc.hpp"
#include "config/loader.hpp"
#include "helpers.hpp"

TEST_CASE("adhoc: a script becomes one main-mode case, its arguments kept exactly", "[config][adhoc]") {
  gilhost_test::TempDir dir;
  gilhost_test::write_file(dir / "bench me.py", "import sys\nprint(sys.argv)\n");
  const std::vector<std::string> argv{"--n", "5", "quote \" and \\ backslash", "tab\there", "é"};
  const gilhost::Experiment ex = gilhost::load_script_experiment((dir / "bench me.py").string(), argv);
  CHECK(ex.name == "bench me");
  REQUIRE(ex.cases.size() == 1);
  const gilhost::Case& c = ex.cases[0];
  CHECK(c.name == "bench me");
  CHECK(c.mode == gilhost::CaseMode::main);
  CHECK(c.argv == argv);
  CHECK(c.script == (dir / "bench me.py").string());
  CHECK(ex.description == "bench me.py run as __main__ with --n 5 quote \" and \\ backslash tab\there é");
  // Defaults as for a file: every build, 3 rounds; a profile is an error (the file has none).
  CHECK(ex.interpreters == std::vector<std::string>{"all"});
  CHECK(ex.repeat == 3);
  gilhost::LoadOptions quick;
  quick.profile = "quick";
  CHECK_THROWS_AS(gilhost::load_script_experiment((dir / "bench me.py").string(), {}, quick), gilhost::ConfigErrors);
}

TEST_CASE("adhoc: what names a script, and TOML quoting", "[config][adhoc]") {
  CHECK(gilhost::is_python_script("x/y.py"));
  CHECK_FALSE(gilhost::is_python_script("configs/race.toml"));
  CHECK(gilhost::toml_quote("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\u000A\\u0001\"");
  // A missing script is the loader's located error, naming the path.
  gilhost_test::TempDir dir;
  try {
    gilhost::load_script_experiment((dir / "nope.py").string(), {});
    FAIL("loaded");
  } catch (const gilhost::ConfigErrors& e) {
    CHECK(e.errors().front().message.find("script not found") != std::string::npos);
  }
}

TEST_CASE("adhoc: -m module becomes one main-mode case naming the module, no script", "[config][adhoc]") {
  const gilhost::Experiment ex = gilhost::load_module_experiment("json.tool", {"--sort-keys"});
  CHECK(ex.name == "json.tool");
  CHECK(ex.module == "json.tool");
  CHECK(ex.description == "-m json.tool run as __main__ with --sort-keys");
  REQUIRE(ex.cases.size() == 1);
  CHECK(ex.cases[0].module == "json.tool");
  CHECK(ex.cases[0].script.empty());
  CHECK(ex.cases[0].mode == gilhost::CaseMode::main);
  CHECK(ex.cases[0].argv == std::vector<std::string>{"--sort-keys"});
}

TEST_CASE("adhoc: module names as python -m takes them", "[config][adhoc]") {
  for (const char* good : {"timeit", "http.server", "_x", "pkg.mod2", "a.b.c", "модуль"}) CHECK(gilhost::is_module_name(good));
  for (const char* bad : {"", ".x", "x.", "a..b", "2x", "a.2b", "a-b", "a/b", "x.py/"}) CHECK_FALSE(gilhost::is_module_name(bad));
}

TEST_CASE("loader: module instead of script, at the experiment or the case", "[config][adhoc]") {
  gilhost_test::TempDir dir;
  gilhost_test::write_file(dir / "s.py", "def f(): return 1\n");
  const auto load = [&](const std::string& toml) { return gilhost::load_experiment_text(toml, (dir / "x.toml").string()); };
  const gilhost::Experiment ex = load(
      "[experiment]\nname = \"m\"\nmodule = \"pkg.mod\"\n"
      "[[case]]\nname = \"a\"\ncall = \"f\"\n"                         // the experiment's module
      "[[case]]\nname = \"b\"\ncall = \"f\"\nscript = \"s.py\"\n"       // its own script
      "[[case]]\nname = \"c\"\nmain = true\nmodule = \"timeit\"\n");  // its own module
  REQUIRE(ex.cases.size() == 3);
  CHECK(ex.cases[0].module == "pkg.mod");
  CHECK(ex.cases[0].script.empty());
  CHECK(ex.cases[1].module.empty());
  CHECK(ex.cases[1].script == (dir / "s.py").string());
  CHECK(ex.cases[2].module == "timeit");
  // Both at once, or a name that is not one: located errors, one each.
  const auto only_error = [&](const std::string& toml) {
    try {
      load(toml);
    } catch (const gilhost::ConfigErrors& e) {
      REQUIRE(e.errors().size() == 1);
      return e.errors()[0];
    }
    FAIL("loaded");
    return gilhost::ConfigError{};
  };
  const gilhost::ConfigError both =
      only_error("[experiment]\nname = \"m\"\nscript = \"s.py\"\nmodule = \"x\"\n[[case]]\nname = \"a\"\ncall = \"f\"\n");
  CHECK(both.where.line == 4);
  CHECK(both.message.find("not both") != std::string::npos);
  const gilhost::ConfigError bad = only_error("[experiment]\nname = \"m\"\n[[case]]\nname = \"a\"\nmain = true\nmodule = \"a-b\"\n");
  CHECK(bad.where.line == 6);
  CHECK(bad.message.find("not a module name") != std::string::npos);
}
