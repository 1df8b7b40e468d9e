// run/scheduler: what a run record says about the GIL, from hand-made child outcomes; and the child's
// environment for a build selected with +gil.
#include <catch2/catch.hpp>

#include <algorithm>

#include "config/experiment.hpp"
#include "discover/interpreter.hpp"
#include "results/record_json.hpp"
#include "run/plan.hpp"
#include "run/scheduler.hpp"

using gilhost::ChildResult;
using gilhost::Interpreter;
using nlohmann::json;

namespace {

const std::string kWarning =
    "<string>:1: RuntimeWarning: The global interpreter lock (GIL) has been enabled to load module '{}', which has "
    "not declared that it can run safely without the GIL. To override this behavior and keep the GIL disabled (at "
    "your own risk), run with PYTHON_GIL=0 or -Xgil=0.\n";

std::string warning_for(const std::string& module) {
  std::string w = kWarning;
  return w.replace(w.find("{}"), 2, module);
}

struct Fixture {
  gilhost::Experiment ex;
  gilhost::Case c;
  Interpreter ft;
  Fixture() {
    ex.name = "gil";
    c.name = c.base_name = "status";
    ft.version = gilhost::Version{3, 14, 7};
    ft.version_full = "3.14.7";
    ft.free_threaded = true;
    ft.shared = true;
    ft.label = ft.short_label();
  }
  json record(const Interpreter& interp, json outcome, const std::string& stderr_text = "",
              json extra_event = json::object()) const {
    ChildResult child;
    child.exited = true;
    child.exit_code = 0;
    json event = {{"event", "case"}, {"mode", "embed"}, {"wall_ns", 1000}, {"outcome", std::move(outcome)}};
    event.update(extra_event);
    child.events.take_line(event.dump());
    REQUIRE(child.events.case_event);
    child.stderr_text = stderr_text;
    return record_of(interp, child);
  }
  gilhost::RunRecord typed_record_of(const Interpreter& interp, const ChildResult& child) const {
    gilhost::PlannedRun run;
    run.c = &c;
    run.interp = &interp;
    return gilhost::make_run_record(ex, run, child);
  }
  // The record as the results file holds it.
  json record_of(const Interpreter& interp, const ChildResult& child) const {
    return gilhost::to_json(typed_record_of(interp, child));
  }
};

json outcome(bool gil_enabled, json extra = json::object()) {
  json o = {{"has_result", true}, {"result", 1}, {"error", nullptr}, {"exit_code", 0},
            {"gil_enabled", gil_enabled}, {"gil_enabled_before", false}};
  o.update(extra);
  return o;
}

}  // namespace

TEST_CASE("run record: the modules the runner saw turn the GIL back on", "[run][gil]") {
  Fixture f;
  ChildResult child;
  child.exited = true;
  child.exit_code = 0;
  child.events.take_line(
      json{{"event", "case"}, {"mode", "embed"}, {"wall_ns", 1000}, {"outcome", outcome(true, {{"gil_reenabled_by", {"noslot"}}})}}
          .dump());
  const gilhost::RunRecord typed = f.typed_record_of(f.ft, child);
  CHECK(typed.status == gilhost::RunStatus::ok);
  CHECK(typed.gil_enabled == true);
  CHECK(typed.gil_reenabled_by == std::vector<std::string>{"noslot"});
  CHECK(typed.wall_ns == 1000);
  CHECK(typed.has_result);
  CHECK(typed.result == 1);

  json r = f.record(f.ft, outcome(true, {{"gil_reenabled_by", {"noslot"}}, {"gil_forced", false}}));
  CHECK(r["status"] == "ok");
  CHECK(r["gil_enabled"] == true);
  CHECK(r["gil_forced"] == false);
  CHECK(r["gil_reenabled_by"] == json::array({"noslot"}));
}

TEST_CASE("run record: the stderr warnings name them when the runner saw no flip", "[run][gil]") {
  Fixture f;
  // The GIL came on before the bootstrap watched (at start-up): CPython's warnings on stderr say by what.
  json r = f.record(f.ft, outcome(true, {{"gil_reenabled_by", json::array()}}),
                    "noise\n" + warning_for("early") + warning_for("pkg._speedups") + warning_for("early"));
  CHECK(r["gil_reenabled_by"] == json::array({"early", "pkg._speedups"}));

  // The GIL is off in the run: a warning on stderr came from some other process of the tree (a spawned
  // worker), not from this interpreter.
  CHECK(f.record(f.ft, outcome(false), warning_for("in_a_worker"))["gil_reenabled_by"] == json::array());
  // A GIL build has nothing to re-enable.
  Interpreter gil_build = f.ft;
  gil_build.free_threaded = false;
  CHECK(f.record(gil_build, outcome(true), warning_for("x"))["gil_reenabled_by"] == json::array());
  // A warning cut off before the closing quote names nothing.
  CHECK(f.record(f.ft, outcome(true), kWarning.substr(0, kWarning.find("{}")) + "trunc")["gil_reenabled_by"] ==
        json::array());
}

TEST_CASE("run record: a forced GIL reads as forced, never as re-enabled", "[run][gil]") {
  Fixture f;
  // Selected with +gil.
  Interpreter forced = gilhost::with_gil_forced(f.ft);
  json r = f.record(forced, outcome(true), warning_for("x"));
  CHECK(r["interpreter"] == "3.14.7t+gil");
  CHECK(r["free_threaded"] == true);
  CHECK(r["gil_forced"] == true);
  CHECK(r["gil_reenabled_by"] == json::array());
  // PYTHON_GIL=1 from elsewhere: the runner read sys.flags.gil == 1.
  json by_env = f.record(f.ft, outcome(true, {{"gil_forced", true}}), warning_for("x"));
  CHECK(by_env["interpreter"] == "3.14.7t");
  CHECK(by_env["gil_forced"] == true);
  CHECK(by_env["gil_reenabled_by"] == json::array());
}

TEST_CASE("run record: expectations keyed on gil see a forced GIL as a GIL", "[run][gil][expect]") {
  Fixture f;
  gilhost::Expectation with_gil;
  with_gil.gil = true;
  with_gil.status = "ok";
  f.c.expects = {with_gil};
  auto described = [](const json& r) {
    std::vector<std::string> out;
    for (const auto& e : r["expect"]) out.push_back(e["expect"].get<std::string>());
    return out;
  };
  CHECK(described(f.record(gilhost::with_gil_forced(f.ft), outcome(true))) ==
        std::vector<std::string>{"with the GIL: status ok"});
  CHECK(described(f.record(f.ft, outcome(false))) == std::vector<std::string>{"status ok"});
}

TEST_CASE("run record: the runner's note on how a case ran is kept", "[run][gil]") {
  Fixture f;
  json r = f.record(f.ft, outcome(false), "", {{"note", "free-threaded build: the legacy shared-GIL config"}});
  CHECK(r["note"] == "free-threaded build: the legacy shared-GIL config");
  CHECK(f.record(f.ft, outcome(false))["note"] == "");
}

TEST_CASE("child_environment: PYTHON_GIL=1 for a build selected with +gil, over anything else", "[run][gil]") {
  gilhost::Experiment ex;
  ex.env = {{"PYTHON_GIL", "0"}, {"GILHOST_TEST_VAR", "x"}};
  auto has = [](const std::vector<std::string>& env, const std::string& kv) {
    return std::find(env.begin(), env.end(), kv) != env.end();
  };
  const auto plain = gilhost::child_environment(ex, false);
  CHECK(has(plain, "PYTHON_GIL=0"));
  CHECK(has(plain, "GILHOST_TEST_VAR=x"));
  const auto forced = gilhost::child_environment(ex, true);
  CHECK(has(forced, "PYTHON_GIL=1"));
  CHECK_FALSE(has(forced, "PYTHON_GIL=0"));
  CHECK(has(forced, "GILHOST_TEST_VAR=x"));
}

TEST_CASE("runner_spec: the runner is told whether the build is free-threaded", "[run][gil]") {
  Fixture f;
  CHECK(gilhost::runner_spec(f.c, f.ft).free_threaded);
  Interpreter gil_build = f.ft;
  gil_build.free_threaded = false;
  CHECK_FALSE(gilhost::runner_spec(f.c, gil_build).free_threaded);
  // And it travels: to the runner (JSON on its argv) and to the Python bootstrap's _spec.
  const auto spec = gilhost::runner_spec(f.c, f.ft);
  CHECK(gilhost::RunnerSpec::from_text(spec.to_json().dump()).free_threaded);
  CHECK(spec.python_spec(0)["free_threaded"] == true);
}

namespace {
// The record of a run that ended with `exit_code` and these child-side facts, and no case event.
json record_without_case(int exit_code, bool closed_early) {
  Fixture f;
  ChildResult child;
  child.exited = true;
  child.exit_code = exit_code;
  child.events_closed_early = closed_early;
  return f.record_of(f.ft, child);
}
}  // namespace

TEST_CASE("run record: exit 0 without a case event is an error that says why", "[run][events]") {
  json plain = record_without_case(0, false);
  CHECK(plain["status"] == "error");
  CHECK(plain["expect_ok"] == false);
  CHECK(plain["note"] == "the process exited before the case was reported (os._exit(0), or did the script close fd 3?)");

  json closed = record_without_case(0, true);
  CHECK(closed["status"] == "error");
  CHECK(closed["note"] == "the event channel closed before the case was reported (did the script close fd 3?)");

  json closed_then_failed = record_without_case(1, true);
  CHECK(closed_then_failed["status"] == "error");
  CHECK(closed_then_failed["note"] ==
        "the event channel closed before the case was reported (did the script close fd 3?); the process exited "
        "with status 1");
  CHECK(record_without_case(7, false)["note"].get<std::string>().find("exited with status 7 before the case") !=
        std::string::npos);
}

TEST_CASE("run record: an event line that cannot be read makes the run an error", "[run][events]") {
  Fixture f;
  ChildResult child;
  child.exited = true;
  child.exit_code = 0;
  child.events.take_line(json{{"event", "case"}, {"mode", "embed"}, {"wall_ns", 1000}, {"outcome", outcome(false)}}.dump());
  child.events.take_line("{not json");
  json r = f.record_of(f.ft, child);
  CHECK(r["status"] == "error");
  CHECK(r["note"] == "1 line on the event channel (fd 3) could not be read (the first: '{not json': not a JSON "
                     "object); did the script write to it?");
  CHECK(r["result"] == 1);  // what was read is kept

  child.events = {};
  child.events.take_line("{not json");
  child.events.take_line(R"({"event":"case","mode":"embed","wall_ns":"soon","outcome":{}})");
  json lost = f.record_of(f.ft, child);
  CHECK(lost["status"] == "error");
  CHECK(lost["note"].get<std::string>().find("2 lines on the event channel (fd 3) could not be read") == 0);
  CHECK(lost["note"].get<std::string>().find("the case was never reported") != std::string::npos);
}

TEST_CASE("child_argv: the runner, or exec mode's bootstrap, is told the watch fd", "[run]") {
  Fixture f;
  const auto spec = gilhost::runner_spec(f.c, f.ft);
  const auto argv = gilhost::child_argv(spec, f.ft, "/x/gilhost-runner", 3, 4);
  REQUIRE(argv.size() == 7);
  CHECK(std::vector<std::string>(argv.begin(), argv.begin() + 5) ==
        std::vector<std::string>{"/x/gilhost-runner", "--event-fd", "3", "--watch-fd", "4"});
  CHECK(gilhost::child_argv(spec, f.ft, "/x/gilhost-runner", 3).size() == 5);
  Interpreter exec_build = f.ft;
  exec_build.shared = false;
  exec_build.executable = "/x/python3";
  const auto exec_argv = gilhost::child_argv(spec, exec_build, "/x/gilhost-runner", 3, 4);
  REQUIRE(exec_argv.size() == 3);
  CHECK(exec_argv[0] == "/x/python3");
  CHECK(exec_argv[2].find("\"event_fd\": 3") != std::string::npos);
  CHECK(exec_argv[2].find("\"watch_fd\": 4") != std::string::npos);
  CHECK(gilhost::child_argv(spec, exec_build, "/x/gilhost-runner", 3)[2].find("\"watch_fd\": ") == std::string::npos);
}
