// What gilhost run's session writes besides the runs: the meta record, the config's words as enums,
// the durations of the progress line.
#include <catch2/catch.hpp>

#include <filesystem>

#include "config/enums.hpp"
#include "run/meta.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "util/gilhost_version.hpp"
#include "util/strings.hpp"

using gilhost::CaseMode;
using gilhost::CompareOp;
using gilhost::SubinterpreterGil;

TEST_CASE("make_meta: the header names the experiment, the interpreters and the file, absolute", "[session]") {
  gilhost::Experiment ex;
  ex.name = "race";
  gilhost::Case c;
  c.name = "sub";
  c.mode = CaseMode::call;
  c.subinterpreters = 2;
  c.gil = SubinterpreterGil::shared;
  ex.cases.push_back(c);
  gilhost::Interpreter a, b;
  a.label = "3.12.4";
  b.label = "3.13.0t";
  b.free_threaded = true;

  // The meta record as its results file holds it.
  const nlohmann::json meta = gilhost::to_json(gilhost::make_meta(ex, {a, b}, "configs/race.toml"));
  CHECK(meta["type"] == "meta");
  CHECK(meta["format"] == gilhost::kResultsFormat);
  CHECK(meta["gilhost_version"] == GILHOST_VERSION);
  CHECK(meta["started_unix_ns"].get<long long>() > 0);
  CHECK(meta["machine"].is_object());
  CHECK(meta["experiment"]["name"] == "race");
  // The enums are written as the words of the TOML file.
  CHECK(meta["experiment"]["cases"][0]["mode"] == "call");
  CHECK(meta["experiment"]["cases"][0]["gil"] == "shared");
  REQUIRE(meta["interpreters"].size() == 2);
  CHECK(meta["interpreters"][1]["label"] == "3.13.0t");
  CHECK(meta["config_file"] == (std::filesystem::current_path() / "configs/race.toml").string());
  // Its results file reads it back as a meta of a format it knows.
  CHECK(gilhost::results_line_problem(meta).empty());
}

TEST_CASE("config enums: words at the edges", "[session][config]") {
  CHECK(std::string(to_string(CaseMode::call)) == "call");
  CHECK(std::string(to_string(CaseMode::main)) == "main");
  CHECK(gilhost::parse_subinterpreter_gil("own") == SubinterpreterGil::own);
  CHECK(gilhost::parse_subinterpreter_gil("shared") == SubinterpreterGil::shared);
  CHECK_FALSE(gilhost::parse_subinterpreter_gil("Shared"));
  CHECK_FALSE(gilhost::parse_subinterpreter_gil(""));
  for (auto gil : {SubinterpreterGil::own, SubinterpreterGil::shared})
    CHECK(gilhost::parse_subinterpreter_gil(to_string(gil)) == gil);
  CHECK(std::string(op_symbol(CompareOp::le)) == "<=");
  CHECK(std::string(op_symbol(CompareOp::ne)) == "!=");
  CHECK_FALSE(is_ordering(CompareOp::eq));
  CHECK_FALSE(is_ordering(CompareOp::ne));
  CHECK(is_ordering(CompareOp::lt));
  CHECK(is_ordering(CompareOp::ge));
}

TEST_CASE("format_duration: whole seconds, then minutes and two-digit seconds", "[session]") {
  CHECK(gilhost::format_duration(0) == "0s");
  CHECK(gilhost::format_duration(42.4) == "42s");
  CHECK(gilhost::format_duration(59.4) == "59s");
  CHECK(gilhost::format_duration(60) == "1m00s");
  CHECK(gilhost::format_duration(187.9) == "3m07s");
}
