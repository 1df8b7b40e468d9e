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
