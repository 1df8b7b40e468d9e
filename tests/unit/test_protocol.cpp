// protocol: the runner↔host events through their one codec, and the line exec mode's Python bootstrap
// writes itself, decoded by the host as any other.
#include <catch2/catch.hpp>

#include "discover/interpreter.hpp"
#include "helpers.hpp"
#include "protocol/codec.hpp"
#include "protocol/event_log.hpp"
#include "protocol/flat_encode.hpp"
#include "run/child.hpp"
#include "run/plan.hpp"
#include "util/clock.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

using nlohmann::json;
namespace protocol = gilhost::protocol;

namespace {

// The event `line` decodes to, failing the test when it decodes to none or to another kind.
template <typename T>
T decoded(const std::string& line) {
  protocol::Decoded d = protocol::decode(line);
  INFO("line: " << line << "\nerror: " << d.error);
  REQUIRE(d.event);
  REQUIRE(std::holds_alternative<T>(*d.event));
  return std::get<T>(*d.event);
}

std::string why_not(const std::string& line) {
  protocol::Decoded d = protocol::decode(line);
  CHECK_FALSE(d.event);
  return d.error;
}

protocol::Outcome sample_outcome() {
  protocol::Outcome o;
  o.has_result = true;
  // What the bootstrap writes for float("nan"), float("-inf") and 10**30: tagged, and kept as written.
  o.result = json{{"nan", {{"$float", "nan"}}}, {"ninf", {{"$float", "-inf"}}},
                  {"big", {{"$int", "1000000000000000000000000000000"}}}, {"text", "héllo"}};
  o.error = protocol::CaseError{"KeyError", "builtins.KeyError", "'x'"};
  o.exit_code = 1;
  o.metrics = json{{"answer", 42}, {"inf", {{"$float", "inf"}}}};
  o.marks = {{"half", 123456789}};
  o.gil_enabled = false;
  o.gil_enabled_before = true;
  o.gil_forced = false;
  o.gil_reenabled_by = {"noslot"};
  o.threads_alive = 3;
  o.python_version = "3.13.1";
  return o;
}

void check_same(const protocol::Outcome& a, const protocol::Outcome& b) {
  CHECK(json(a) == json(b));
  CHECK(a.result == b.result);
  REQUIRE(b.error);
  CHECK(b.error->qualname == a.error->qualname);
  CHECK(b.exit_code == a.exit_code);
  REQUIRE(b.marks.size() == 1);
  CHECK(b.marks[0].label == "half");
  CHECK(b.marks[0].ns == 123456789);
  CHECK(b.gil_enabled == a.gil_enabled);
  CHECK(b.gil_enabled_before == a.gil_enabled_before);
  CHECK(b.threads_alive == a.threads_alive);
}

}  // namespace

TEST_CASE("protocol: every event survives encode then decode", "[protocol]") {
  const protocol::ReadyEvent ready =
      decoded<protocol::ReadyEvent>(protocol::encode(protocol::ReadyEvent{42, 1500, 7000000000123, 900}));
  CHECK(ready.pid == 42);
  CHECK(ready.init_ns == 1500);
  CHECK(ready.main_at_ns == 7000000000123);
  CHECK(ready.load_ns == 900);
  // An older runner's ready line: no start or load time, read as 0 (not said).
  const auto old_ready = decoded<protocol::ReadyEvent>(R"({"event":"ready","pid":5,"init_ns":10})");
  CHECK(old_ready.main_at_ns == 0);
  CHECK(old_ready.load_ns == 0);

  protocol::CaseEvent embed;
  embed.mode = protocol::RunMode::embed;
  embed.start_ns = 100;
  embed.end_ns = 350;
  embed.wall_ns = 250;
  embed.prepare_ns = 7;
  embed.init_ns = 11;
  embed.bootstrap_ns = 13;
  embed.bootstrap_cached = true;
  embed.cpu = {1, 2, 3, 4, 10, 5, 6};
  embed.outcome = sample_outcome();
  embed.outcome.import_ns = 5;
  const std::string line = protocol::encode(embed);
  CHECK(line.find('\n') == std::string::npos);  // one event, one line
  const auto back = decoded<protocol::CaseEvent>(line);
  CHECK(back.mode == protocol::RunMode::embed);
  CHECK(back.start_ns == 100);
  CHECK(back.end_ns == 350);
  CHECK(back.wall_ns == 250);
  CHECK(back.prepare_ns == 7);
  CHECK(back.outcome.import_ns == std::optional<std::int64_t>(5));
  CHECK(back.init_ns == 11);
  CHECK(back.bootstrap_ns == 13);
  CHECK(back.bootstrap_cached == true);
  CHECK(json(back.cpu) == json(embed.cpu));
  CHECK(back.cpu.cpu_ns == 10);
  CHECK(back.per_interpreter.empty());
  CHECK(back.note.empty());
  check_same(embed.outcome, back.outcome);
  // Only a subinterpreters case says how many and which GIL; a case without a note has none.
  CHECK(json::parse(line).count("per_interpreter") == 0);
  CHECK(json::parse(line).count("note") == 0);

  protocol::CaseEvent sub;
  sub.mode = protocol::RunMode::subinterpreters;
  sub.subinterpreters = 2;
  sub.gil = "shared";
  sub.note = "as the build allows";
  sub.outcome.result = json::array({1, nullptr});
  sub.per_interpreter = {{sample_outcome(), 77}, {protocol::Outcome{}, 0}};
  const auto sub_back = decoded<protocol::CaseEvent>(protocol::encode(sub));
  CHECK(sub_back.mode == protocol::RunMode::subinterpreters);
  CHECK(sub_back.subinterpreters == 2);
  CHECK(sub_back.gil == "shared");
  CHECK(sub_back.note == "as the build allows");
  CHECK_FALSE(sub_back.init_ns);
  REQUIRE(sub_back.per_interpreter.size() == 2);
  CHECK(sub_back.per_interpreter[0].end_ns == 77);
  check_same(sample_outcome(), sub_back.per_interpreter[0].outcome);
  CHECK_FALSE(sub_back.per_interpreter[1].outcome.error);
  CHECK_FALSE(sub_back.per_interpreter[1].outcome.gil_enabled);
  // The records keep each one's outcome with its end time.
  CHECK(json(sub_back.per_interpreter[0])["end_ns"] == 77);
  CHECK(json(sub_back.per_interpreter[0])["result"]["big"]["$int"] == "1000000000000000000000000000000");

  const auto fin = decoded<protocol::FinalizedEvent>(protocol::encode(protocol::FinalizedEvent{900, 20480, -1, 8000000000456}));
  CHECK(fin.at_ns == 8000000000456);
  CHECK(fin.finalize_ns == 900);
  CHECK(fin.max_rss_kb == 20480);
  CHECK(fin.status == -1);

  const auto err = decoded<protocol::RunnerErrorEvent>(
      protocol::encode(protocol::RunnerErrorEvent{protocol::RunnerStage::load, "libpython lacks Py_X"}));
  CHECK(err.stage == protocol::RunnerStage::load);
  CHECK(err.message == "libpython lacks Py_X");
}

TEST_CASE("protocol: the runner's case event carries the bootstrap's outcome text as it is", "[protocol]") {
  protocol::CaseEvent e;
  e.start_ns = 100;
  e.end_ns = 350;
  e.wall_ns = 250;
  // _finish's text: not decoded by the runner, spliced in, decoded by gilhost as any outcome.
  e.outcome_json = nlohmann::json(sample_outcome()).dump();
  const std::string with_envelope = protocol::encode(e, {77, "tok"});
  CHECK(with_envelope.find('\n') == std::string::npos);
  const json parsed = json::parse(with_envelope);
  CHECK(parsed.at("pid") == 77);
  CHECK(parsed.at("token") == "tok");
  const auto back = decoded<protocol::CaseEvent>(with_envelope);
  CHECK(back.wall_ns == 250);
  CHECK(back.outcome_json.empty());  // decoding fills `outcome`
  CHECK(nlohmann::json(back.outcome) == nlohmann::json(sample_outcome()));
  // Text that is no JSON makes the line unreadable, with why: never a case without its outcome.
  e.outcome_json = "{\"has_result\": tru";
  CHECK_FALSE(why_not(protocol::encode(e)).empty());
}

TEST_CASE("protocol: a line that is no event says why", "[protocol]") {
  CHECK(why_not("not json") == "not a JSON object");
  CHECK(why_not("[1,2]") == "not a JSON object");
  CHECK(why_not("{\"event\":\"case\",\"n\":") == "not a JSON object");  // cut short
  CHECK(why_not("{\"n\":1}") == "no \"event\" name");
  CHECK(why_not("{\"event\":\"end\"}") == "unknown event 'end'");
  CHECK(why_not(R"({"event":"case","mode":"embed"})") == "a case event without its outcome");
  CHECK(why_not(R"({"event":"case","mode":"fork","outcome":{}})") == "unknown mode 'fork'");
  CHECK(why_not(R"({"event":"case","mode":"embed","wall_ns":"soon","outcome":{}})") == "'wall_ns' is not an integer");
  CHECK(why_not(R"({"event":"case","mode":"embed","wall_ns":1.5,"outcome":{}})") == "'wall_ns' is not an integer");
  CHECK(why_not(R"({"event":"case","mode":"embed","wall_ns":18446744073709551615,"outcome":{}})") ==
        "'wall_ns' is not a 64-bit integer");
  CHECK(why_not(R"({"event":"case","mode":"embed","outcome":{"exit_code":{"$int":"99999999999999999999"}}})") ==
        "'exit_code' is not an integer");
  CHECK(why_not(R"({"event":"case","mode":"embed","outcome":{"marks":[["a"]]}})") == "'marks' is not a list of [label, ns]");
  CHECK(why_not(R"({"event":"error","stage":"lunch","message":"m"})") == "unknown stage 'lunch'");
  CHECK(why_not(R"({"event":"ready","pid":true})") == "'pid' is not an integer");

  std::string error;
  CHECK_FALSE(protocol::decode_outcome("{\"has_result\": 1}", error));
  CHECK(error == "the outcome's 'has_result' is not true or false");
  auto o = protocol::decode_outcome(R"({"has_result": true, "result": {"$float": "nan"}, "gil_enabled": null})", error);
  REQUIRE(o);
  CHECK(o->result == json{{"$float", "nan"}});
  CHECK_FALSE(o->gil_enabled);  // null: nobody could say
}

TEST_CASE("protocol: the event log keeps the first event of each kind and counts the rest of the lines",
          "[protocol]") {
  protocol::EventLog log;
  log.take_line("");  // nothing
  log.take_line(protocol::encode(protocol::ReadyEvent{1, 2}));
  log.take_line("garbage");
  log.take_line(protocol::encode(protocol::ReadyEvent{3, 4}));
  log.take_line(R"({"event":"ready","pid":"x"})");
  REQUIRE(log.ready);
  CHECK(log.ready->pid == 1);
  CHECK(log.unreadable == 2);
  CHECK(log.first_unreadable == "garbage");
  CHECK(log.first_unreadable_why == "not a JSON object");
  CHECK(protocol::EventLog{}.unreadable == 0);
  log.take_line(std::string(500, 'x'));
  CHECK(log.first_unreadable.size() == 7);  // still the first
}

TEST_CASE("protocol: exec mode's case line, written by the bootstrap itself, decodes like the runner's",
          "[protocol][python]") {
  const std::string python3 = gilhost_test::real_python3();
  if (python3.empty()) {
    WARN("no python3 on PATH: not running the bootstrap");
    return;
  }
  gilhost_test::TempDir tmp;
  gilhost_test::write_file(tmp / "case.py",
                           "import gilhost\n"
                           "def run(n):\n"
                           "    gilhost.metric('twice', 2 * n)\n"
                           "    gilhost.mark('done')\n"
                           "    return {'n': n, 'nan': float('nan'), 'inf': float('-inf'), 'big': 10**30,\n"
                           "            'text': 'h\\u00e9llo \"q\"'}\n");
  // The argv gilhost starts an exec-mode build with: `python -c <the bootstrap>` and `_exec_main()`.
  gilhost::Interpreter python;
  python.executable = python3;
  python.shared = false;
  gilhost::RunnerSpec spec;
  spec.executable = python.executable;
  spec.script = (tmp / "case.py").string();
  spec.mode = "call";
  spec.function = "run";
  spec.kwargs = json{{"n", 21}};
  gilhost::ChildRequest req;
  req.argv = gilhost::child_argv(spec, python, "/unused/gilhost-runner", 3, -1);
  req.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  req.timeout_s = 60;
  gilhost::ChildResult r = gilhost::run_child(req);
  INFO("stderr: " << r.stderr_text);
  CHECK(r.exit_code == 0);
  CHECK(r.events.unreadable == 0);
  REQUIRE(r.events.case_event);
  const protocol::CaseEvent& c = *r.events.case_event;
  CHECK(c.mode == protocol::RunMode::exec);
  CHECK(c.wall_ns == c.end_ns - c.start_ns);
  CHECK(c.wall_ns > 0);
  CHECK_FALSE(c.init_ns);  // the runner's, not exec mode's
  CHECK(c.cpu.cpu_ns == c.cpu.user_ns + c.cpu.sys_ns + c.cpu.children_user_ns + c.cpu.children_sys_ns);
  const protocol::Outcome& o = c.outcome;
  CHECK(o.has_result);
  CHECK_FALSE(o.error);
  CHECK(o.exit_code == 0);
  CHECK(o.result["n"] == 21);
  CHECK(o.result["nan"] == json{{"$float", "nan"}});
  CHECK(o.result["inf"] == json{{"$float", "-inf"}});
  CHECK(o.result["big"] == json{{"$int", "1000000000000000000000000000000"}});
  CHECK(o.result["text"] == "h\u00e9llo \"q\"");
  CHECK(o.metrics == json{{"twice", 42}});
  REQUIRE(o.marks.size() == 1);
  CHECK(o.marks[0].label == "done");
  CHECK(o.marks[0].ns >= c.start_ns);
  CHECK(o.gil_enabled.has_value());
  CHECK(o.threads_alive == 1);
  CHECK_FALSE(o.python_version.empty());
}

TEST_CASE("protocol: a GIL's object and offset travel; one located after the case replaces a report of none",
          "[protocol]") {
  protocol::GilEvent gil;
  gil.has_gil = true;
  gil.futex_lo = 0x7f0000001000;
  gil.futex_hi = 0x7f0000001100;
  gil.object = "/opt/python/lib/libpython3.12.so.1.0";
  gil.object_offset = 0x5a1000;
  const auto back = decoded<protocol::GilEvent>(protocol::encode(gil));
  CHECK(back.object == gil.object);
  CHECK(back.object_offset == 0x5a1000);
  CHECK_FALSE(back.after_case);
  // An older runner's line: no object, read as not relocatable.
  CHECK(decoded<protocol::GilEvent>(R"({"event":"gil","interpreter":0,"has_gil":true})").object.empty());

  protocol::EventLog log;
  protocol::GilEvent none;
  none.has_gil = false;
  log.take_line(protocol::encode(none));
  protocol::GilEvent later = gil;
  later.after_case = true;
  log.take_line(protocol::encode(later));
  REQUIRE(log.gils.size() == 1);
  CHECK(log.gils[0].has_gil);
  CHECK(log.gils[0].after_case);
  CHECK(log.gils[0].futex_lo == gil.futex_lo);
  // A second report that is not after the case changes nothing.
  protocol::GilEvent again = none;
  log.take_line(protocol::encode(again));
  CHECK(log.gils[0].has_gil);
}

TEST_CASE("protocol: a line over the bound is unreadable and said; run_child keeps going after it", "[protocol]") {
  protocol::EventLog log;
  log.take_overlong(protocol::kMaxEventLine + 5);
  CHECK(log.unreadable == 1);
  CHECK(log.first_unreadable == "(" + std::to_string(protocol::kMaxEventLine + 5) + " bytes without a newline)");
  CHECK(log.first_unreadable_why.find("over the 16 MiB bound on one event") != std::string::npos);

  // 20 MiB without a newline, then a real event: the first is dropped, the second kept, in one pass.
  gilhost::ChildRequest req;
  req.argv = {"/bin/sh", "-c",
              "head -c 20971520 /dev/zero | tr '\\0' x >&3; "
              "printf '\\n{\"event\":\"finalized\",\"finalize_ns\":5,\"max_rss_kb\":1,\"status\":0}\\n' >&3"};
  req.timeout_s = 60;
  req.thread_states = false;
  const gilhost::ChildResult r = gilhost::run_child(req);
  const std::int64_t returned = gilhost::monotonic_ns();
  CHECK(r.exit_code == 0);
  CHECK(r.events.unreadable == 1);
  CHECK(r.events.first_unreadable == "(20971520 bytes without a newline)");
  REQUIRE(r.events.finalized);
  CHECK(r.events.finalized->finalize_ns == 5);
  // Read at a tick, or after the reap from what was left in the pipe: stamped when it was read.
  CHECK(r.events.finalized_at_ns >= r.spawned_at_ns);
  CHECK(r.events.finalized_at_ns <= returned);
}

TEST_CASE("protocol: the runner's stamps are checked against the host's clocks", "[protocol]") {
  const std::int64_t spawned = 1'000'000'000, reaped = 4'000'000'000;  // the process lived 3 s
  auto with_case = [](std::int64_t start, std::int64_t end, std::int64_t wall, protocol::RunMode mode) {
    protocol::EventLog log;
    protocol::CaseEvent c;
    c.mode = mode;
    c.start_ns = start;
    c.end_ns = end;
    c.wall_ns = wall;
    log.case_event = c;
    log.case_at_ns = 3'500'000'000;
    return log;
  };
  const auto exec = protocol::RunMode::exec, embed = protocol::RunMode::embed;
  // Consistent, in exec mode (which has no finalized event): nothing to say.
  CHECK(protocol::clock_contradiction(with_case(1'500'000'000, 2'500'000'000, 1'000'000'000, exec), spawned, reaped, true) == "");
  // Not known (nothing spawned): nothing to check.
  CHECK(protocol::clock_contradiction(with_case(1, 2, 1000, exec), 0, 0, true) == "");
  // The forged one of issue 25: 1 us, stamps that are no time of this run.
  CHECK(protocol::clock_contradiction(with_case(1, 1001, 1000, exec), spawned, reaped, true)
            .find("are not inside gilhost's own bracket") != std::string::npos);
  CHECK(protocol::clock_contradiction(with_case(1'500'000'000, 2'500'000'000, 1000, exec), spawned, reaped, true)
            .find("is not its own end minus its start") != std::string::npos);
  CHECK(protocol::clock_contradiction(with_case(0, 5'000'000'000, 5'000'000'000, exec), spawned, reaped, true)
            .find("longer than the whole process lived") != std::string::npos);
  // Its end after the event arrived.
  CHECK(protocol::clock_contradiction(with_case(3'000'000'000, 3'600'000'000, 600'000'000, exec), spawned, reaped, true)
            .find("not inside") != std::string::npos);
  // Embedded: the runner ends by reporting its end; a process that exited without it did not end as the
  // runner does, while one killed by a signal is judged as crashed elsewhere.
  protocol::EventLog log = with_case(1'500'000'000, 1'500'001'000, 1000, embed);
  CHECK(protocol::clock_contradiction(log, spawned, reaped, true).find("never reported its end") != std::string::npos);
  CHECK(protocol::clock_contradiction(log, spawned, reaped, false) == "");
  // A finalized event that says the finalisation began before the case ended.
  log.finalized = protocol::FinalizedEvent{600'000'000, 1, 0, 1'600'000'000};
  log.finalized_at_ns = 3'600'000'000;
  CHECK(protocol::clock_contradiction(log, spawned, reaped, true).find("the finalized event contradicts") != std::string::npos);
  // The case started at 3.4 s by its event, the runner's 'ready' read at 1.2 s: 2.2 s, of which the
  // bootstrap and the preparation claim 0.1 s (a case event forged after 2 s of the case).
  protocol::EventLog late = with_case(3'400'000'000, 3'400'001'000, 1000, embed);
  late.ready_at_ns = 1'200'000'000;
  late.case_event->prepare_ns = 100'000'000;
  CHECK(protocol::clock_contradiction(late, spawned, reaped, false).find("claim 0.100000 s") != std::string::npos);
  // The same stamps where the GIL event (the locator's end, untimed by the runner) arrived at 3.2 s: a
  // starved runner that took 2 s to locate its GIL (seen at load 11), not a forgery.
  protocol::EventLog starved = late;
  starved.gil_at_ns = 3'200'000'000;
  CHECK(protocol::clock_contradiction(starved, spawned, reaped, false) == "");
  // And a GIL event that came at once leaves the 2 s unaccounted, counted from it.
  starved.gil_at_ns = 1'250'000'000;
  CHECK(protocol::clock_contradiction(starved, spawned, reaped, false).find("after the runner's GIL event arrived") !=
        std::string::npos);
  // A case that started soon after 'ready', with a long finish (a big result encoded) after it: consistent.
  protocol::EventLog honest = with_case(1'300'000'000, 1'400'000'000, 100'000'000, embed);
  honest.case_at_ns = 3'400'000'000;
  honest.ready_at_ns = 1'200'000'000;
  honest.finalized = protocol::FinalizedEvent{100'000'000, 1, 0, 3'600'000'000};
  honest.finalized_at_ns = 3'700'000'000;
  CHECK(protocol::clock_contradiction(honest, spawned, reaped, true) == "");
}

TEST_CASE("protocol: a GIL located after the case is in protocol order; any other 'gil' after the case is not",
          "[protocol]") {
  const protocol::Envelope runner{10, "tok"};
  protocol::EventLog log;
  log.expect("tok", 10);
  protocol::GilEvent none;
  none.has_gil = false;
  log.take_line(protocol::encode(protocol::ReadyEvent{10, 1}, runner));
  log.take_line(protocol::encode(none, runner));
  log.take_line(protocol::encode(protocol::CaseEvent{}, runner));
  protocol::GilEvent located;
  located.has_gil = true;
  located.futex_lo = 1000;
  located.futex_hi = 1008;
  located.after_case = true;
  log.take_line(protocol::encode(located, runner));
  CHECK(log.foreign == 0);
  REQUIRE(log.gils.size() == 1);
  CHECK(log.gils[0].has_gil);
  // A 'gil' event after the case that does not say so is out of order, as before.
  protocol::GilEvent stray = none;
  log.take_line(protocol::encode(stray, runner));
  CHECK(log.foreign == 1);
  CHECK(log.first_foreign.find("out of protocol order") != std::string::npos);
  log.take_line(protocol::encode(protocol::FinalizedEvent{1, 2, 0, 3}, runner));
  CHECK(log.finalized);
}

TEST_CASE("protocol: the runner's events written member by member are the document's text, byte for byte",
          "[protocol]") {
  const protocol::Envelope from{4242, "tok-3f9a"};
  protocol::ReadyEvent ready{4242, 25'000'000, 53'000'000'000'000, 3'500'000};
  protocol::GilEvent cached;
  cached.has_gil = true;
  cached.futex_lo = 0x7f0000001000;
  cached.futex_hi = 0x7f0000001100;
  cached.object = "/opt/py 3.14/lib/libpython3.14.so.1.0";
  cached.object_offset = 5979632;
  cached.locate_ns = 70'000;
  cached.from_cache = true;
  protocol::GilEvent none;  // a free-threaded build's GIL off: no window, no object
  none.helper_tid = 77;
  protocol::GilEvent after = cached;
  after.after_case = true;
  after.from_cache = false;
  after.note = "seen after the case";
  protocol::CaseEvent c;
  c.start_ns = 10;
  c.end_ns = 20;
  c.wall_ns = 10;
  c.prepare_ns = 300'000;
  c.init_ns = 24'000'000;
  c.bootstrap_ns = 450'000;
  c.bootstrap_cached = true;
  c.cpu = {1, 2, 3, 4, 10, 5, 6};
  c.outcome_json = R"({"has_result":true,"result":[1,"x"],"exit_code":0})";
  protocol::CaseEvent noted = c;
  noted.note = "ran in the main interpreter";
  noted.bootstrap_cached.reset();
  noted.init_ns.reset();
  protocol::FinalizedEvent fin{2'700'000, 9852, -1, 53'000'100'000'000};
  for (const protocol::Event& e : std::vector<protocol::Event>{ready, cached, none, after, c, noted, fin}) {
    const auto flat = protocol::flat_line(e, from);
    REQUIRE(flat);
    CHECK(*flat == protocol::encode_as_document(e, from));
    CHECK(protocol::encode(e, from) == *flat);
  }
  // What it does not write, the document does: text that needs escaping, a case with its outcome as a
  // struct, subinterpreters, errors; encode's text is still the document's.
  protocol::GilEvent odd = cached;
  odd.object = "/opt/\"quoted\"/lib\xff.so";
  protocol::CaseEvent structured = c;
  structured.outcome_json.clear();
  protocol::CaseEvent subs = c;
  subs.mode = protocol::RunMode::subinterpreters;
  const protocol::Envelope odd_token{1, "t\n"};
  for (const protocol::Event& e : std::vector<protocol::Event>{odd, structured, subs, protocol::RunnerErrorEvent{}}) {
    CHECK_FALSE(protocol::flat_line(e, from));
    CHECK(protocol::encode(e, from) == protocol::encode_as_document(e, from));
  }
  CHECK_FALSE(protocol::flat_line(ready, odd_token));
  CHECK(protocol::encode(ready, odd_token) == protocol::encode_as_document(ready, odd_token));
}
