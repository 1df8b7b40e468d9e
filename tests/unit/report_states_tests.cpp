// Issue 26, items 5 and 7, in the terminal: each cell's thread states as a bar and figures (report/state_bar),
// the "mostly blocked" reading (report/readings), and failures said once (report/failures): one traceback per
// distinct error with its builds, no expectation of a script that states none, no vs table of "-", no time
// for a case that never started, and paths never broken.
#include <catch2/catch.hpp>

#include <algorithm>

#include "report/failures.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/readings.hpp"
#include "report/state_bar.hpp"
#include "report/text.hpp"
#include "util/strings.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using report_test::count;
using report_test::states_of;
using S = ThreadState;

namespace {

constexpr std::int64_t kMs = 1000000;

// A Python thread that spent `ms` in each state, in that order.
ThreadRecord thread_in(std::int64_t tid, const std::string& name, std::initializer_list<std::pair<S, std::int64_t>> ms, bool main = false) {
  ThreadRecord t;
  t.pid = 100;
  t.tid = tid;
  t.name = name;
  t.main = main;
  t.gil_located = true;
  std::int64_t at = 0;
  for (const auto& [state, length] : ms) {
    t.timeline.push_back({at * kMs, state});
    t.times[state] += length * kMs;
    at += length;
  }
  t.end_ns = at * kMs;
  return t;
}


// The issue's script: a CPU spinner, a sleeper, a lock waiter and a socket reader, joined by the main thread.
ThreadStates four_threads(const std::string& gil = "located") {
  return states_of({thread_in(1, "MainThread", {{S::cpu, 5}, {S::lock, 995}}, true), thread_in(2, "spin", {{S::cpu, 1000}}),
                    thread_in(3, "sleeper", {{S::sleep, 1000}}), thread_in(4, "lock_waiter", {{S::lock, 1000}}),
                    thread_in(5, "reader", {{S::cpu, 2}, {S::io, 998}})},
                   gil);
}

RunRecord run_of(const std::string& case_name, const std::string& build, RunStatus status = RunStatus::ok) {
  RunRecord r;
  r.experiment = "states";
  r.case_name = case_name;
  r.interpreter = build;
  r.python = build;
  r.status = status;
  r.wall_ns = 1000 * kMs;
  r.cpu_per_wall = 1.0;
  return r;
}

ReportModel model_of(const std::vector<RunRecord>& runs, const std::string& baseline_python = "") {
  MetaRecord meta;
  meta.experiment.name = "states";
  meta.machine = MachineRecord{"vm", "6.1", "x86_64", "AMD EPYC", 2, 2, 0};
  LoadedResults file;
  file.path = "states.jsonl";
  file.lines.emplace_back(meta);
  for (const auto& r : runs) file.lines.emplace_back(r);
  ReportOptions o;
  o.baseline_python = baseline_python;
  return build_report_model(merge_results({file}), o);
}

ThreadShares shares_of(std::initializer_list<std::pair<S, double>> values) {
  ThreadShares s;
  s.runs = s.gil_runs = 3;
  s.python_threads = 4;
  for (const auto& [state, share] : values) s.median[static_cast<std::size_t>(state)] = share;
  s.gil_wait = s.share(S::gil);
  return s;
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const auto& line : split(text, '\n')) widest = std::max(widest, display_width(line));
  return widest;
}

// A syntax error in an ad-hoc script, as the runner records it: raised in the bootstrap's _prepare.
RunRecord syntax_error(const std::string& build, const std::string& script_path) {
  RunRecord r = run_of("bad", build, RunStatus::error);
  r.wall_ns = 2320;  // the runner timed its empty _run: 2.32 µs
  r.error = RunError{"SyntaxError", "builtins.SyntaxError", "invalid syntax (bad.py, line 3)"};
  r.stderr_text = "Traceback (most recent call last):\n  File \"<gilhost-bootstrap>\", line 319, in _prepare\n  File \"" +
                  script_path + "\", line 3\n    def work(:\n             ^\nSyntaxError: invalid syntax\n";
  r.stderr_file = script_path + ".jsonl.stderr/bad@" + build + "-0.txt";
  r.expect = {{"status ok", false, "status was error (SyntaxError)"}};
  r.expect_ok = false;
  r.stopped = "not repeated: failed in every run of the first round";
  return r;
}

}  // namespace

TEST_CASE("state bar: a letter per 5 %, in the states' order, its letters adding up", "[report][states]") {
  CHECK(state_bar_text(shares_of({{S::cpu, 0.25}, {S::lock, 0.25}, {S::io, 0.25}, {S::sleep, 0.25}})) == "CCCCCLLLLLIIIIISSSSS");
  // Thirds: the largest remainder takes the letter left over; the bar is always kLetters long.
  const std::string thirds = state_bar_text(shares_of({{S::cpu, 0.333}, {S::runqueue, 0.333}, {S::gil, 0.334}}));
  CHECK(thirds == "CCCCCCCQQQQQQGGGGGGG");
  // Medians that do not add up to 1 are drawn as parts of their sum.
  CHECK(state_bar_text(shares_of({{S::cpu, 0.4}, {S::sleep, 0.4}}), 10) == "CCCCCSSSSS");
  CHECK(state_figures_text(shares_of({{S::cpu, 0.2}, {S::runqueue, 0.2}, {S::lock, 0.4}, {S::io, 0.1}, {S::sleep, 0.1}})) ==
        "cpu 20 · core 20 · GIL 0 · lock 40 · I/O 10 · sleep 10 %");
  CHECK(state_figures_text(shares_of({{S::cpu, 0.9}, {S::other, 0.1}})) == "cpu 90 · core 0 · GIL 0 · lock 0 · I/O 0 · sleep 0 · other 10 %");
}

TEST_CASE("state bar: a share the runs cannot tell is '?', never 0", "[report][states]") {
  SECTION("GIL and lock not told apart (the GIL not located)") {
    ThreadShares s = shares_of({{S::cpu, 0.5}, {S::lock, 0.5}});
    s.gil_runs = 0;
    s.gil_wait.reset();
    CHECK(state_bar_text(s) == "CCCCCCCCCC??????????");
    CHECK(state_figures_text(s) == "cpu 50 · core 0 · GIL ? · lock ? (together 50) · I/O 0 · sleep 0 %");
  }
  SECTION("the GIL share unknown alone (too little of the tree seen)") {
    ThreadShares s = shares_of({{S::cpu, 0.5}, {S::gil, 0.25}, {S::lock, 0.25}});
    s.gil_wait.reset();
    CHECK(state_bar_text(s) == "CCCCCCCCCC?????LLLLL");
    CHECK(state_figures_text(s).find("GIL ? · lock 25") != std::string::npos);
  }
}

TEST_CASE("states block: each cell's line, side by side at 80 columns, the unknown's reason beside it", "[report][states]") {
  RunRecord a = run_of("four", "3.12.1"), b = run_of("four", "3.14.7");
  a.thread_states = four_threads();
  b.thread_states = four_threads("exec mode: the GIL was not located");
  const ReportModel m = model_of({a, b});
  const std::string block = states_block_text(m.sections[0].summary, 80, "states.jsonl");
  INFO(block);
  CHECK(block.find("\n                cpu core GIL lock I/O sleep  bar\n") != std::string::npos);
  CHECK(block.find("\n  four @ 3.12.1  20    0   0   40  20    20  CCCCLLLLLLLLIIIISSSS\n") != std::string::npos);
  CHECK(block.find("\n  four @ 3.14.7  20    0   ?    ?  20    20  CCCC????????IIIISSSS\n") != std::string::npos);
  CHECK(block.find("? GIL and lock not told apart (together 40 %): exec mode: the GIL was not located") != std::string::npos);
  // The whole report at 80 columns carries it too, and no line of it is wider.
  const std::string text = render_text(m, {80, "states.jsonl"});
  CHECK(text.find("CCCCLLLLLLLLIIIISSSS") != std::string::npos);
  CHECK(widest_line(text) <= 80);
}

TEST_CASE("states block: a narrow terminal puts the label above its bar; past 12 cells the rest is counted", "[report][states]") {
  std::vector<RunRecord> runs;
  for (int k = 0; k < 14; ++k) {
    RunRecord r = run_of("a_case_with_a_rather_long_name_" + std::to_string(k), "3.12.1");
    r.thread_states = four_threads();
    runs.push_back(r);
  }
  const std::string block = states_block_text(model_of(runs).sections[0].summary, 80, "states.jsonl");
  INFO(block);
  CHECK(block.find("\n  a_case_with_a_rather_long_name_0 @ 3.12.1\n     20    0   0   40  20    20  CCCCLLLLLLLLIIIISSSS\n") !=
        std::string::npos);
  CHECK(widest_line(render_text(model_of(runs), {80, "states.jsonl"})) <= 80);
  CHECK(count(block, "CCCCLLLLLLLLIIIISSSS") == state_bar::kMaxCells);
  CHECK(block.find("  bar: a letter per 5 %: C cpu, Q core") != std::string::npos);
  CHECK(block.find("(2 more cells: gilhost report states.jsonl --wide)") != std::string::npos);
  // Unabridged (--wide): every cell.
  CHECK(count(states_block_text(model_of(runs).sections[0].summary, 0, ""), "CCCCLLLLLLLLIIIISSSS") == 14);
}

TEST_CASE("blocked reading: the threads that waited in one state, by name; all of them alike in one phrase", "[report][states][readings]") {
  SECTION("the issue's four threads: the three that blocked named, the join()ing main thread not") {
    RunRecord r = run_of("four", "3.12.1");
    r.thread_states = four_threads();
    const auto reading = blocked_reading(r);
    REQUIRE(reading);
    CHECK(reading->rule == ReadingRule::blocked);
    CHECK(reading->text == "3 of 5 threads mostly blocked: sleeper asleep 100 %, lock_waiter on a lock 100 %, reader on I/O 100 % (the median run)");
  }
  SECTION("a case that timed out with every thread on a lock") {
    RunRecord r = run_of("hang", "3.12.1", RunStatus::timeout);
    r.thread_states = states_of({thread_in(1, "MainThread", {{S::cpu, 10}, {S::lock, 990}}, true),
                                 thread_in(2, "Thread-1", {{S::lock, 1000}}), thread_in(3, "Thread-2", {{S::lock, 1000}})});
    const auto reading = blocked_reading(r);
    REQUIRE(reading);
    CHECK(reading->text == "all 3 threads blocked on a lock until the timeout (a failed run)");
    // A slow start-up (a busy machine) takes the main thread under kBlocked: still one of them.
    RunRecord slow = r;
    slow.thread_states = states_of({thread_in(1, "MainThread", {{S::cpu, 300}, {S::runqueue, 200}, {S::lock, 500}}, true),
                                    thread_in(2, "Thread-1", {{S::lock, 500}}), thread_in(3, "Thread-2", {{S::lock, 500}})});
    CHECK(blocked_reading(slow)->text == "all 3 threads blocked on a lock until the timeout (a failed run)");
    slow.thread_states->threads[0].times[S::lock] = 400 * kMs;  // under kMainBlocked: the others alone
    CHECK(blocked_reading(slow)->text.rfind("2 of 3 threads mostly blocked: Thread-1 on a lock 100 %", 0) == 0);
    // Where the GIL was not located, a futex wait may be the GIL's: said so.
    r.thread_states->gil = "exec mode: the GIL was not located";
    CHECK(blocked_reading(r)->text == "all 3 threads blocked on a lock or the GIL (not told apart) until the timeout (a failed run)");
  }
  SECTION("below the threshold, or one thread of an ok run: nothing to read") {
    RunRecord r = run_of("busy", "3.12.1");
    r.thread_states = states_of({thread_in(1, "MainThread", {{S::cpu, 210}, {S::lock, 790}}, true),
                                 thread_in(2, "Thread-1", {{S::cpu, 210}, {S::sleep, 790}})});
    CHECK_FALSE(blocked_reading(r));
    r.thread_states = states_of({thread_in(1, "MainThread", {{S::sleep, 1000}}, true)});
    CHECK_FALSE(blocked_reading(r));
    // Every thread of an ok run on a lock: the lock convoy reading says it; asleep, no other reading does.
    r.thread_states = states_of({thread_in(1, "MainThread", {{S::lock, 1000}}, true), thread_in(2, "Thread-1", {{S::lock, 1000}})});
    CHECK_FALSE(blocked_reading(r));
    r.thread_states = states_of({thread_in(1, "MainThread", {{S::sleep, 1000}}, true), thread_in(2, "Thread-1", {{S::sleep, 1000}})});
    CHECK(blocked_reading(r)->text == "all 2 threads blocked asleep (the median run)");
    r.thread_states = states_of({thread_in(1, "MainThread", {{S::sleep, 1000}}, true)});
    r.status = RunStatus::timeout;  // one thread that slept through its timeout: that is the answer
    CHECK(blocked_reading(r)->text == "the one thread was blocked asleep until the timeout (a failed run)");
  }
}

TEST_CASE("a cell whose every run timed out shows its failed runs' states and reading", "[report][states][readings]") {
  RunRecord r = run_of("hang", "3.12.1", RunStatus::timeout);
  r.thread_states = states_of({thread_in(1, "MainThread", {{S::lock, 1000}}, true), thread_in(2, "Thread-1", {{S::lock, 1000}})});
  const ReportModel m = model_of({r});
  const std::string text = render_text(m, {80, "states.jsonl"});
  INFO(text);
  CHECK(text.find("\n  hang @ 3.12.1 (failed)   0    0   0  100   0     0  LLLLLLLLLLLLLLLLLLLL\n") != std::string::npos);
  CHECK(text.find("all 2 threads blocked on a lock until the timeout") != std::string::npos);
}

TEST_CASE("failure output: a syntax error on two builds is one traceback, with both builds", "[report][failures]") {
  const std::string script = "/tmp/a/rather/long/directory/name/that/goes/on/and/on/for/a/while/bad.py";
  const ReportModel m = model_of({syntax_error("3.12.1", script), syntax_error("3.14.7", script)}, "3.12.1");
  const std::string text = render_text(m, {80, "bad.jsonl"});
  INFO(text);
  CHECK(count(text, "SyntaxError: invalid syntax\n") == 1);
  CHECK(text.find("✗ bad @ 3.12.1, 3.14.7 (did not run: 1 of 1 runs failed on each):") != std::string::npos);
  CHECK(count(text, "(bad.py, line 3)") == 1);  // the cause, once
  // As `python bad.py` prints it: no runner frame, no "Traceback" heading over a location that is no frame.
  CHECK(text.find("gilhost-bootstrap") == std::string::npos);
  CHECK(text.find("Traceback (most recent call last)") == std::string::npos);
  CHECK(text.find("                 ^\n") != std::string::npos);  // the caret under the code, unwrapped
  // Each path whole on its line, however long.
  CHECK(text.find("full stderr: " + script + ".jsonl.stderr/bad@3.12.1-0.txt\n") != std::string::npos);
  CHECK(text.find("full stderr: " + script + ".jsonl.stderr/bad@3.14.7-0.txt\n") != std::string::npos);
  CHECK(text.find("bad @ 3.12.1, 3.14.7: not repeated") != std::string::npos);
  // No expectation of a script that states none, no vs table of "-", no time for a case that never ran.
  CHECK(text.find("expectations not met") == std::string::npos);
  CHECK(text.find("vs 3.12.1") == std::string::npos);
  CHECK(text.find("µs") == std::string::npos);
  CHECK(text.find("did not run") != std::string::npos);
  CHECK(text.find("did not run  SyntaxError  ") != std::string::npos);  // the grid cell: not "[error]" again
  CHECK(text.find("[error]") == std::string::npos);
  CHECK(text.find("short of the precision target") == std::string::npos);
  CHECK(text.find('\x1e') == std::string::npos);
}

TEST_CASE("failure output: distinct errors keep a traceback each; an expectation stated is still listed", "[report][failures]") {
  RunRecord a = syntax_error("3.12.1", "bad.py");
  RunRecord b = run_of("bad", "3.14.7", RunStatus::error);
  b.error = RunError{"KeyError", "builtins.KeyError", "'k'"};
  b.stderr_text = "Traceback (most recent call last):\n  File \"<gilhost-bootstrap>\", line 352, in _run\n"
                  "  File \"bad.py\", line 9, in <module>\n    d['k']\nKeyError: 'k'\n";
  b.expect = {{"result == 4", false, "got nothing"}};
  b.expect_ok = false;
  const std::string text = render_text(model_of({a, b}), {80, ""});
  INFO(text);
  CHECK(text.find("✗ bad @ 3.12.1 (did not run: 1 of 1 runs failed): SyntaxError") != std::string::npos);
  CHECK(text.find("✗ bad @ 3.14.7 (1 of 1 runs failed): KeyError: 'k'") != std::string::npos);
  // A frame of the script's own: the heading stays, the runner's frame does not.
  CHECK(text.find("Traceback (most recent call last):\n        File \"bad.py\", line 9, in <module>") != std::string::npos);
  CHECK(text.find("expectations not met:\n  ✗ bad @ 3.14.7 (1 of 1 runs): result == 4: got nothing") != std::string::npos);
  CHECK(text.find("status ok: status was error") == std::string::npos);
}

TEST_CASE("a case never started: an error raised in _prepare or with no wall time; one in _run did start", "[report][failures]") {
  CHECK(case_never_started(syntax_error("3.12.1", "bad.py")));
  RunRecord r = run_of("x", "3.12.1", RunStatus::error);
  r.stderr_text = "Traceback (most recent call last):\n  File \"<gilhost-bootstrap>\", line 352, in _run\n  File \"x.py\", line 1, in <module>\nValueError\n";
  CHECK_FALSE(case_never_started(r));
  // The phase is the first runner frame of the last traceback: what _prepare called may raise below it.
  RunRecord compiled = run_of("x", "3.12.1", RunStatus::error);
  compiled.stderr_text = "Traceback (most recent call last):\n  File \"<gilhost-bootstrap>\", line 338, in _prepare\n"
                         "  File \"<gilhost-bootstrap>\", line 247, in _compile\n  File \"x.py\", line 1\nSyntaxError: x\n";
  CHECK(case_never_started(compiled));
  // An earlier traceback of _prepare's printed before the case's own: the case's is the one read.
  RunRecord both = run_of("x", "3.12.1", RunStatus::error);
  both.stderr_text = compiled.stderr_text + r.stderr_text;
  CHECK_FALSE(case_never_started(both));
  r.wall_ns = 0;
  CHECK(case_never_started(r));
  RunRecord t = run_of("x", "3.12.1", RunStatus::timeout);
  t.wall_ns = 0;
  CHECK_FALSE(case_never_started(t));  // it ran until its timeout
  // A cell of errors that did start keeps its time.
  RunRecord started = run_of("x", "3.12.1", RunStatus::error);
  started.stderr_text = r.stderr_text;
  const ReportModel m = model_of({started});
  CHECK(wall_cell_text(m.sections[0].summary.cells.begin()->second).find("1.00 s") == 0);
}
