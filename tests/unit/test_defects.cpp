// Issue 20, "Nothing silently wrong", and issue 25, "hostile": the unit-level half of the defects whose
// end-to-end tests are in tests/e2e/defects_tests.cpp and tests/e2e/hostile_tests.cpp (same numbers).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "config/adhoc.hpp"
#include "config/expect.hpp"
#include "config/loader.hpp"
#include "helpers.hpp"
#include "protocol/codec.hpp"
#include "protocol/event_log.hpp"
#include "report/failures.hpp"
#include "report/merge.hpp"
#include "report/metrics.hpp"
#include "report/model.hpp"
#include "report/sessions.hpp"
#include "report/summary.hpp"
#include "report/trace.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "results/validate.hpp"
#include "run/stderr_file.hpp"
#include "runner/runspec.hpp"
#include "util/atomic_file.hpp"
#include "util/json_depth.hpp"
#include "util/random_id.hpp"
#include "util/strings.hpp"
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

// ---- Issue 25, "the measured script, the files and the signals are hostile": the unit-level half of the
// defects whose end-to-end probes are in tests/e2e/hostile_tests.cpp (same numbers).
namespace {

namespace fs = std::filesystem;

gilhost::MetaRecord meta_named(const std::string& name) {
  gilhost::MetaRecord m;
  m.format = gilhost::kResultsFormat;
  m.experiment = gilhost::experiment_info({{"name", name}});
  return m;
}

gilhost::RunRecord run_named(const std::string& experiment, const std::string& case_name) {
  gilhost::RunRecord r;
  r.experiment = experiment;
  r.case_name = case_name;
  r.interpreter = "3.12.1";
  r.wall_ns = 1000;
  r.parent_wall_ns = 2000;
  return r;
}

int count_runs(const gilhost::MergedResults& m) {
  int n = 0;
  for (const auto& line : m.lines) n += std::holds_alternative<gilhost::RunRecord>(line);
  return n;
}

}  // namespace

TEST_CASE("25.3 a results writer refuses a file that is not a results file, and appends to one that is",
          "[defects][hostile][results]") {
  gilhost_test::TempDir tmp;
  const fs::path toml = tmp / "s.toml", script = tmp / "a.py", empty = tmp / "empty.jsonl", results = tmp / "r.jsonl";
  gilhost_test::write_file(toml, "[experiment]\nname = \"s\"\n");
  gilhost_test::write_file(script, "print('hi')\n");
  gilhost_test::write_file(empty, "");
  for (const auto& p : {toml, script}) {
    const std::string before = gilhost_test::slurp(p);
    try {
      gilhost::ResultsWriter w(p.string());
      FAIL("appended to " << p);
    } catch (const std::runtime_error& e) {
      CHECK_THAT(e.what(), Catch::Contains("is not a gilhost results file"));
    }
    CHECK(gilhost_test::slurp(p) == before);
  }
  { gilhost::ResultsWriter w(empty.string()); w.append(meta_named("x")); }
  { gilhost::ResultsWriter w(results.string()); w.append(meta_named("x")); }
  { gilhost::ResultsWriter w(results.string()); w.append(meta_named("x")); }  // a results file: appended to
  CHECK(gilhost::load_results_ordered(results.string()).lines.size() == 2);
  CHECK(gilhost::not_results_file_reason("/dev/null").empty());
}

TEST_CASE("25.4 every line carries its session's identity; a file read three times counts each run once",
          "[defects][hostile][results]") {
  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "a.jsonl").string();
  std::string id;
  {
    gilhost::ResultsWriter w(path);
    id = w.session_id();
    w.append(meta_named("x"));
    for (int k = 0; k < 4; ++k) w.append(run_named("x", "c"));
  }
  CHECK(gilhost::is_hex_id(id));
  const auto loaded = gilhost::load_results_ordered(path);
  REQUIRE(loaded.lines.size() == 5);
  CHECK(std::get<gilhost::MetaRecord>(loaded.lines[0]).session_id == id);
  for (std::size_t k = 1; k < 5; ++k) {
    const auto& run = std::get<gilhost::RunRecord>(loaded.lines[k]);
    CHECK(run.origin.session_id == id);
    CHECK(run.origin.index == static_cast<std::int64_t>(k - 1));
  }
  const gilhost::MergedResults thrice = gilhost::merge_files({path, path, path});
  CHECK(count_runs(thrice) == 4);
  CHECK(thrice.duplicate_lines == 10);
  CHECK(gilhost::list_sessions(thrice).size() == 1);
  // A forged id is refused, naming the field.
  gilhost_test::write_file(tmp / "forged.jsonl", "{\"type\":\"meta\",\"format\":1,\"session_id\":\"../x\"}\n");
  CHECK_THROWS_WITH(gilhost::load_results_ordered((tmp / "forged.jsonl").string()), Catch::Contains("session_id"));
}

TEST_CASE("25.5 interleaved sessions in one file: --session picks by the tag, older files by position",
          "[defects][hostile][results]") {
  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "both.jsonl").string();
  {
    gilhost::ResultsWriter one(path), two(path);
    one.append(meta_named("one"));
    two.append(meta_named("two"));
    for (int k = 0; k < 5; ++k) {  // interleaved, as two --no-lock sessions append
      one.append(run_named("one", "c"));
      two.append(run_named("two", "c"));
    }
  }
  for (int want : {1, 2, -1}) {
    const gilhost::MergedResults picked = gilhost::keep_session(gilhost::merge_files({path}), want);
    CHECK(count_runs(picked) == 5);
    for (const auto& line : picked.lines)
      if (const auto* run = std::get_if<gilhost::RunRecord>(&line)) CHECK(run->experiment == (want == 1 ? "one" : "two"));
  }
  // No identity (written before it existed): the lines after a meta are its session.
  gilhost_test::write_file(tmp / "old.jsonl",
                           "{\"type\":\"meta\",\"format\":1,\"experiment\":{\"name\":\"a\"}}\n"
                           "{\"type\":\"run\",\"experiment\":\"a\",\"case\":\"c\",\"interpreter\":\"3.12\",\"status\":\"ok\",\"wall_ns\":5}\n"
                           "{\"type\":\"meta\",\"format\":1,\"experiment\":{\"name\":\"b\"}}\n"
                           "{\"type\":\"run\",\"experiment\":\"b\",\"case\":\"c\",\"interpreter\":\"3.12\",\"status\":\"ok\",\"wall_ns\":5}\n");
  const auto old = (tmp / "old.jsonl").string();
  const gilhost::MergedResults second = gilhost::keep_session(gilhost::merge_files({old}), 2);
  REQUIRE(count_runs(second) == 1);
  CHECK(std::get<gilhost::RunRecord>(second.lines.back()).experiment == "b");
  CHECK(count_runs(gilhost::merge_files({old, old})) == 4);  // nothing to tell them apart by: counted as read, as before
}

TEST_CASE("25.6 atomic writes: a planted symlink is never followed, the temporary never left behind",
          "[defects][hostile][util]") {
  gilhost_test::TempDir tmp;
  const fs::path out = tmp / "report.html", victim = tmp / "victim.txt";
  gilhost_test::write_file(victim, "precious\n");
  // Every name the old writer would have used, planted.
  fs::create_symlink(victim, fs::path(out.string() + ".tmp." + std::to_string(::getpid())));
  gilhost::write_user_file(out.string(), "<html></html>\n");
  CHECK(gilhost_test::slurp(out) == "<html></html>\n");
  CHECK(gilhost_test::slurp(victim) == "precious\n");
  auto temporaries = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(tmp.path())) n += e.path().filename().string().find(".tmp.") != std::string::npos;
    return n;
  };
  CHECK(temporaries() == 1);  // the planted link only
  {  // a producer that throws half-way
    gilhost::AtomicFile f((tmp / "half.csv").string());
    f.write("a,b\r\n");
  }
  CHECK_FALSE(fs::exists(tmp / "half.csv"));
  fs::create_directories(tmp / "busy" / "inside");  // rename onto a non-empty folder fails
  gilhost::AtomicFile f((tmp / "busy").string());
  f.write(std::string(200000, 'x'));  // past the buffer: on disk already
  CHECK_THROWS_AS(f.commit(), std::system_error);
  CHECK(temporaries() == 1);
  // A device is written in place, and a full one is an error, not a silent loss.
  CHECK_THROWS_AS(gilhost::write_user_file("/dev/full", std::string(100000, 'x')), std::system_error);
}

TEST_CASE("25.10 control characters are shown escaped, text stays", "[defects][hostile][util]") {
  using gilhost::escape_controls;
  CHECK(escape_controls("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(escape_controls("\x1b]0;owned\x07") == "\\x1b]0;owned\\x07");
  CHECK(escape_controls("del\x7f") == "del\\x7f");
  CHECK(escape_controls("csi\xc2\x9b" "31m") == "csi\\u009b31m");  // C1 as UTF-8
  CHECK(escape_controls("raw\x9b") == "raw\\x9b");                  // C1 as a lone byte
  CHECK(escape_controls("\xff\xfe") == "\\xff\\xfe");
  CHECK(escape_controls("é ✓ line\n\ttab") == "é ✓ line\n\ttab");
  CHECK(escape_controls("a\nb\rc", true) == "a\\nb\\x0dc");
  CHECK(escape_controls("csv\r\nrow\roverwrite") == "csv\r\nrow\\x0doverwrite");  // CRLF stays, a lone CR not
  CHECK(gilhost::is_valid_utf8("é✓"));
  CHECK_FALSE(gilhost::is_valid_utf8("\xff"));
}

TEST_CASE("25.11 Markdown: a script's text stays code, whatever backticks and HTML it holds", "[defects][hostile][report]") {
  CHECK(gilhost::markdown_code_span("x` <img src=x onerror=alert(1)>") == "`` x` <img src=x onerror=alert(1)> ``");
  CHECK(gilhost::markdown_code_span("``` \x1b[2J") == "```` ``` \\x1b[2J ````");
  const std::string block = gilhost::markdown_code_block({"```", "</pre><script>"}, "  ");
  CHECK(block == "  ````\n  ```\n  </pre><script>\n  ````\n");
  gilhost::CellFailures f;
  f.failed.push_back({"c<b>", "3.12", 1, 1, "ValueError: ` <img src=x onerror=alert(1)>", {}, ""});
  const std::string md = gilhost::failures_markdown(f);
  CHECK_THAT(md, Catch::Contains("c&lt;b&gt;"));
  CHECK_THAT(md, Catch::Contains("`` ValueError: ` <img src=x onerror=alert(1)> ``"));
}

TEST_CASE("25.12 arguments after -- reach the script byte for byte, not through TOML text", "[defects][hostile][config]") {
  gilhost_test::TempDir tmp;
  gilhost_test::write_file(tmp / "a.py", "import sys\n");
  const std::vector<std::string> argv{"\xff", "{x}", "ok"};
  const gilhost::Experiment ex = gilhost::load_script_experiment((tmp / "a.py").string(), argv, {});
  REQUIRE(ex.cases.size() == 1);
  CHECK(ex.cases[0].argv == argv);
  gilhost::RunnerSpec spec;
  spec.argv = argv;
  const json j = spec.to_json();
  CHECK(j["argv_hex"] == json::array({"ff", "7b787d", "6f6b"}));
  CHECK_NOTHROW(j.dump());
  CHECK(gilhost::RunnerSpec::from_text(j.dump()).argv == argv);  // the runner reads the bytes back
}

TEST_CASE("25.14 impossible thread states are left out on read, and no share exceeds 100 %", "[defects][hostile][results]") {
  gilhost::RunRecord r = run_named("x", "c");
  r.parent_wall_ns = 1000000000;
  gilhost::ThreadStates ts;
  ts.interval_ms = 1;
  gilhost::ThreadRecord t;
  t.tid = 12;
  t.times[gilhost::ThreadState::cpu] = 500000000;
  ts.threads.push_back(t);
  ts.python_totals = t.times;
  r.thread_states = ts;
  CHECK(gilhost::impossible_thread_states(r).empty());
  r.thread_states->threads[0].times[gilhost::ThreadState::gil] = 5000000000;  // 5 s in a 1 s run
  CHECK_THAT(gilhost::impossible_thread_states(r), Catch::Contains("thread 12"));
  r.thread_states->threads[0].times[gilhost::ThreadState::gil] = 0;
  r.thread_states->python_totals[gilhost::ThreadState::gil] = std::numeric_limits<std::int64_t>::max();
  CHECK_THAT(gilhost::impossible_thread_states(r), Catch::Contains("gil"));
  r.thread_states->python_totals[gilhost::ThreadState::gil] = -400000000;  // a share of 500/100 would be 500 %
  const std::string text = "{\"type\":\"meta\",\"format\":1}\n" + gilhost::to_json(r).dump() + "\n";
  const gilhost::LoadedResults loaded = gilhost::load_results_text(text, "hand.jsonl");
  REQUIRE(loaded.impossible.size() == 1);
  CHECK_THAT(loaded.impossible[0], Catch::StartsWith("hand.jsonl:2: "));
  CHECK_FALSE(std::get<gilhost::RunRecord>(loaded.lines[1]).thread_states.has_value());
  // The sampled states beside exact ones (--thread-states both) are checked alike, on their own.
  r.thread_states_sampled = r.thread_states;
  r.thread_states->python_totals[gilhost::ThreadState::gil] = 0;
  const gilhost::LoadedResults both =
      gilhost::load_results_text("{\"type\":\"meta\",\"format\":1}\n" + gilhost::to_json(r).dump() + "\n", "both.jsonl");
  REQUIRE(both.impossible.size() == 1);
  CHECK_THAT(both.impossible[0], Catch::EndsWith("its sampled thread states left out"));
  CHECK(std::get<gilhost::RunRecord>(both.lines[1]).thread_states.has_value());
  CHECK_FALSE(std::get<gilhost::RunRecord>(both.lines[1]).thread_states_sampled.has_value());
  // Even a model made in memory never shows more than all of it.
  CHECK(r.thread_states->python_totals.share(gilhost::ThreadState::cpu) <= 1.0);
  CHECK(r.thread_states->python_totals.share(gilhost::ThreadState::gil) >= 0.0);
}

TEST_CASE("25.15 a crash note names its signal once", "[defects][hostile][report]") {
  gilhost::RunRecord r = run_named("x", "c");
  r.status = gilhost::RunStatus::crashed;
  r.signal = SIGKILL;
  r.parent_wall_ns = 1500000000;
  r.note = std::string("killed by ") + ::strsignal(SIGKILL);
  CHECK(gilhost::failure_cause(r) == "killed by SIGKILL after 1.5 s");
  r.note += " after the case";
  CHECK(gilhost::failure_cause(r) == "killed by SIGKILL after 1.5 s (after the case)");
}

TEST_CASE("25.13 a failed run's stderr file says when the run wrote more than was kept", "[defects][hostile][run]") {
  gilhost_test::TempDir tmp;
  gilhost::RunRecord r = run_named("x", "c");
  r.stderr_text = "head\n[... 10 bytes not kept ...]\ntail\n";
  r.stderr_bytes = 40;
  const std::string cut = gilhost::write_stderr_file(tmp.str(), r);
  CHECK_THAT(gilhost_test::slurp(cut), Catch::StartsWith("[gilhost: this run wrote 40 bytes to stderr"));
  r.stderr_text = "whole\n";
  r.stderr_bytes = 6;
  CHECK(gilhost_test::slurp(gilhost::write_stderr_file(tmp.str(), r)) == "whole\n");
}

TEST_CASE("25.9 the streamed trace is the trace, from runs read without their timelines", "[defects][hostile][report]") {
  const std::string path = std::string(GILHOST_SOURCE_DIR) + "/tests/fixtures/report_threads.jsonl";
  const gilhost::ReportModel full = gilhost::build_report_model(gilhost::merge_files({path}), {});
  gilhost::ReadOptions light;
  light.timelines = false;
  const gilhost::ReportModel lean = gilhost::build_report_model(gilhost::merge_files({path}, {}, light), {});
  std::string streamed;
  gilhost::write_chrome_trace(lean, [&](std::string_view t) { streamed.append(t); });
  const json expected = gilhost::chrome_trace(full);
  REQUIRE(expected["traceEvents"].size() > 10);
  CHECK(json::parse(streamed) == expected);
}
