// Issue 20, "Nothing silently wrong": the unit-level half of the defects whose end-to-end tests are in
// tests/e2e/defects_tests.cpp (same numbers).
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "config/expect.hpp"
#include "config/loader.hpp"
#include "protocol/codec.hpp"
#include "protocol/event_log.hpp"
#include "report/metrics.hpp"
#include "report/summary.hpp"
#include "results/record_json.hpp"
#include "util/json_depth.hpp"
#include "util/tagged_number.hpp"

using nlohmann::json;
using gilhost::CompareOp;
namespace protocol = gilhost::protocol;

namespace {

gilhost::RunRecord run_with(const std::string& case_name, json params, json metrics = json::object()) {
  gilhost::RunRecord r;
  r.experiment = "x";
  r.case_name = case_name;
  r.interpreter = "3.12.1";
  r.params = std::move(params);
  r.metrics = std::move(metrics);
  r.wall_ns = 1000;
  return r;
}

std::string load_error(const std::string& toml) {
  try {
    gilhost::load_experiment_text(toml, std::string(GILHOST_SOURCE_DIR) + "/configs/defects.toml");
  } catch (const gilhost::ConfigErrors& e) {
    return e.what();
  }
  return "";
}

const std::string kCase = "[[case]]\nname = \"f\"\ncall = \"f\"\n";
const std::string kHead = "[experiment]\nscript = \"../scripts/race.py\"\n";

}  // namespace

TEST_CASE("20.1 metric medians keep infinities; a metric the same tagged value everywhere shows as written",
          "[defects][metrics]") {
  const json inf = {{"$float", "inf"}}, nan = {{"$float", "nan"}};
  const std::vector<gilhost::RunRecord> mix = {run_with("c", {}, {{"m", 1}}), run_with("c", {}, {{"m", 2}}),
                                               run_with("c", {}, {{"m", inf}})};
  CHECK(gilhost::metric_values(mix, "m").size() == 3);
  CHECK(gilhost::metric_cell(mix, "m") == "2 ±50.0%");
  const std::vector<gilhost::RunRecord> infs = {run_with("c", {}, {{"m", inf}}), run_with("c", {}, {{"m", inf}})};
  CHECK(gilhost::metric_cell(infs, "m") == "inf");
  const std::vector<gilhost::RunRecord> nans = {run_with("c", {}, {{"m", nan}})};
  CHECK(gilhost::metric_cell(nans, "m") == "nan");
  const json big = {{"$int", "1" + std::string(400, '0')}};
  CHECK(gilhost::metric_cell({run_with("c", {}, {{"m", big}})}, "m") == "1.0e400");
  CHECK(gilhost::metric_cell({run_with("c", {}, {{"m", 1}}), run_with("c", {}, {{"m", inf}})}, "m") == "inf");
}

TEST_CASE("20.2 runs of one case with different params are told apart", "[defects][summary]") {
  const auto runs = gilhost::distinguish_params({run_with("nap", {{"t", 0.01}, {"n", 1}}), run_with("nap", {{"t", 0.2}, {"n", 1}}),
                                                 run_with("other", {{"t", 1}})});
  CHECK(runs[0].case_name == "nap (t=0.01)");
  CHECK(runs[1].case_name == "nap (t=0.2)");
  CHECK(runs[2].case_name == "other");
  const auto sum = gilhost::summarize(runs, {}, "");
  CHECK(sum.cells.size() == 3);
  CHECK(load_error(kHead + "[[case]]\nname = \"f\"\ncall = \"f\"\nsweep = { a = [1, \"1\"] }\n")
            .find("the sweep makes case 'f[a=1]' twice") != std::string::npos);
}

TEST_CASE("20.5 integers compare exactly, whatever their size", "[defects][expect]") {
  const json two63 = {{"$int", "9223372036854775808"}};
  const json max = std::numeric_limits<std::int64_t>::max();
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, two63, max));
  CHECK(gilhost::compare_json(CompareOp::gt, two63, max));
  CHECK(gilhost::compare_json(CompareOp::lt, max, two63));
  const json huge = {{"$int", "1" + std::string(400, '0')}};
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, huge, std::numeric_limits<double>::infinity()));
  CHECK(gilhost::compare_json(CompareOp::lt, huge, std::numeric_limits<double>::infinity()));
  CHECK(gilhost::compare_json(CompareOp::gt, huge, 1e300));
  CHECK(gilhost::compare_json(CompareOp::lt, json{{"$int", "-" + std::string(400, '9')}}, -1e300));
  CHECK(gilhost::compare_json(CompareOp::eq, json(9007199254740993LL), json(9007199254740993LL)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json(9007199254740993LL), json(9007199254740992.0)));
  CHECK(gilhost::compare_json(CompareOp::gt, json(9007199254740993LL), json(9007199254740992.0)));
  CHECK(gilhost::compare_json(CompareOp::lt, json(3), json(3.5)));
  CHECK(gilhost::compare_json(CompareOp::gt, json(-3), json(-3.5)));
  CHECK(gilhost::compare_json(CompareOp::eq, json(-0.0), json(0)));
  CHECK(gilhost::compare_json(CompareOp::ne, json{{"$float", "nan"}}, json(1)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::le, json{{"$float", "nan"}}, json(1)));
}

TEST_CASE("20.8 a results file's integers out of range are refused", "[defects][results]") {
  json run = {{"type", "run"}, {"experiment", "x"}, {"case", "c"}, {"interpreter", "i"}, {"status", "ok"}, {"wall_ns", 5}};
  CHECK_NOTHROW(gilhost::line_from_json(run));
  for (const json& bad : {json(9223372036854775808ULL), json(1e300), json(-5), json(1.5)}) {
    run["wall_ns"] = bad;
    CHECK_THROWS_AS(gilhost::line_from_json(run), gilhost::RecordError);
  }
  run["wall_ns"] = 5;
  run["round"] = 4294967296LL;
  CHECK_THROWS_WITH(gilhost::line_from_json(run), Catch::Contains("\"round\" is not an integer of 32 bits"));
  run["round"] = 0;
  run["cpu"] = {{"cpu_ns", -1}};
  CHECK_THROWS_WITH(gilhost::line_from_json(run), Catch::Contains("\"cpu_ns\" is not a count"));
}

TEST_CASE("20.9 and 20.13: config integers have limits, checked before a sweep is expanded", "[defects][loader]") {
  CHECK(load_error(kHead + "repeat = 9223372036854775807\n" + kCase).find("defects.toml:3:") != std::string::npos);
  CHECK(load_error(kHead + "sample_interval_ms = 9223372036854775807\n" + kCase).find("'sample_interval_ms' must be from 1 to 60000") !=
        std::string::npos);
  CHECK(load_error(kHead + "timeout = 1e300\n" + kCase).find("'timeout' must be more than 0 seconds and at most a week") !=
        std::string::npos);
  CHECK(load_error(kHead + kCase + "subinterpreters = 100000\n").find("'subinterpreters' must be from 1 to 1024") != std::string::npos);
  auto list = [](int n) {
    std::string out = "[";
    for (int i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string(i);
    return out + "]";
  };
  CHECK(load_error(kHead + "[[case]]\nname = \"f\"\ncall = \"f\"\nsweep = { a = " + list(2) + ", b = " + list(100) +
                   ", c = " + list(101) + " }\n")
            .find("this sweep makes more than 10000 cases (2 x 100 x 101)") != std::string::npos);
  CHECK(load_error(kHead + "repeat = 100000\nwarmup = 1\n[[case]]\nname = \"f\"\ncall = \"f\"\nsweep = { a = [1,2,3,4,5,6,7,8,9,10] }\n")
            .find("100001 rounds x 10 cases is 1000010 runs a build") != std::string::npos);
}

TEST_CASE("20.11 an experiment name must not lead out of results/", "[defects][loader]") {
  for (const char* name : {"../../escaped/evil", "a/b", "..", ""})
    CHECK(load_error(kHead + "name = \"" + name + "\"\n" + kCase).find("defects.toml:3:8: error: name = ") != std::string::npos);
  CHECK(load_error(kHead + "name = \"fine.name\"\n" + kCase).empty());
}

TEST_CASE("20.12 the depth of a JSON line is counted without recursing", "[defects][results]") {
  CHECK_FALSE(gilhost::json_nested_deeper_than("[[[1]]]", 3));
  CHECK(gilhost::json_nested_deeper_than("[[[[1]]]]", 3));
  CHECK_FALSE(gilhost::json_nested_deeper_than("{\"a\": \"[[[[[[\"}", 2));  // brackets in strings do not count
  CHECK_FALSE(gilhost::json_nested_deeper_than("[\"\\\"[[[[\"]", 2));        // nor after an escaped quote
  CHECK(gilhost::json_nested_deeper_than(std::string(20000, '[') + std::string(20000, ']')));
  const protocol::Decoded d = protocol::decode("{\"event\":\"case\",\"outcome\":{\"result\":" + std::string(20000, '[') +
                                               std::string(20000, ']') + "}}");
  CHECK_FALSE(d.event);
  CHECK(d.error == "nested deeper than 256 levels");
}

TEST_CASE("20.14 a file's argv escapes braces as {{ and }}", "[defects][loader]") {
  const auto ex = gilhost::load_experiment_text(
      kHead + "[params]\nn = 5\n[[case]]\nname = \"m\"\nmain = true\nargv = [\"{n}\", \"{{n}}\", \"d = {{}}\", \"}}\"]\n",
      std::string(GILHOST_SOURCE_DIR) + "/configs/defects.toml");
  REQUIRE(ex.cases.size() == 1);
  CHECK(ex.cases[0].argv == std::vector<std::string>{"5", "{n}", "d = {}", "}"});
}

TEST_CASE("20.20 leftover processes are a note of the report", "[defects][summary]") {
  auto r = run_with("orphan", {});
  r.leftover_processes = 2;
  const auto sum = gilhost::summarize({r, run_with("orphan", {})}, {}, "");
  const auto notes = gilhost::leftover_notes(sum);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("orphan @ 3.12.1: 2 leftover processes in 1 of 2 runs") == 0);
}

TEST_CASE("20.4 the event log keeps only the runner's events, in protocol order", "[defects][protocol]") {
  const protocol::Envelope runner{100, "tok"};
  const std::string ready = protocol::encode(protocol::ReadyEvent{100, 1, 0, 0}, runner);
  protocol::CaseEvent real;
  real.wall_ns = 42;
  real.outcome.has_result = true;
  real.outcome.result = "real";
  protocol::CaseEvent forged = real;
  forged.outcome.result = "forged";
  const std::string fin = protocol::encode(protocol::FinalizedEvent{1, 2, 0, 3}, runner);

  SECTION("in order, from the runner: every event kept") {
    protocol::EventLog log;
    log.expect("tok", 100);
    for (const auto& line : {ready, protocol::encode(real, runner), fin}) log.take_line(line);
    CHECK(log.foreign == 0);
    REQUIRE(log.case_event);
    CHECK(log.case_event->outcome.result == "real");
    CHECK(log.finalized);
  }
  SECTION("a case event without the token, or from a forked process, is refused and counted") {
    const std::vector<std::pair<std::string, std::string>> strangers = {
        {protocol::encode(forged), "a 'case' event without this run's token"},
        {protocol::encode(forged, {100, "guess"}), "a 'case' event without this run's token"},
        {protocol::encode(forged, {101, "tok"}), "a 'case' event from pid 101, not the runner's (100)"}};
    for (const auto& [line, why] : strangers) {
      protocol::EventLog log;
      log.expect("tok", 100);
      log.take_line(ready);
      log.take_line(line);
      log.take_line(protocol::encode(real, runner));
      CHECK(log.foreign == 1);
      CHECK(log.first_foreign == why);
      REQUIRE(log.case_event);
      CHECK(log.case_event->outcome.result == "real");
    }
  }
  SECTION("out of order: a second case, a finalized before the case, a ready after it") {
    protocol::EventLog log;
    log.expect("tok", 100);
    log.take_line(fin);
    CHECK(log.first_foreign == "a 'finalized' event out of protocol order (before 'ready')");
    log.take_line(ready);
    log.take_line(protocol::encode(real, runner));
    log.take_line(protocol::encode(forged, runner));
    log.take_line(ready);
    CHECK(log.foreign == 3);
    CHECK(log.case_event->outcome.result == "real");
  }
  SECTION("exec mode: the case is the first event") {
    protocol::EventLog log;
    log.expect("tok", 100);
    log.take_line(protocol::encode(real, runner));
    CHECK(log.foreign == 0);
    CHECK(log.case_event);
  }
}
