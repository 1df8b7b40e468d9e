// Thread states in reports (report/threads, readings, compare, the gil_wait view, the trace export): the
// GIL wait column, the one-line readings, compare's GIL columns, the view, and the Chrome trace, on
// hand-made records and on tests/fixtures/report_threads.jsonl.
#include <catch2/catch.hpp>

#include <sstream>

#include "cli/commands.hpp"
#include "config/loader.hpp"
#include "helpers.hpp"
#include "report/compare.hpp"
#include "report/export.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/readings.hpp"
#include "report/text.hpp"
#include "report/trace.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "util/strings.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using nlohmann::json;
using Catch::Matchers::Contains;
using report_test::states_of;

namespace {

using Segments = std::vector<std::pair<std::int64_t, ThreadState>>;  // (start_ms, state)

constexpr std::int64_t kMs = 1000000;

// A thread whose times are what its timeline says.
ThreadRecord thread_of(std::int64_t tid, const std::string& name, const Segments& segments, std::int64_t end_ms, bool python = true) {
  ThreadRecord t;
  t.pid = 100;
  t.tid = tid;
  t.name = name;
  t.python = python;
  t.gil_located = true;
  t.start_ns = segments.front().first * kMs;
  t.end_ns = end_ms * kMs;
  for (std::size_t k = 0; k < segments.size(); ++k) {
    t.timeline.push_back({segments[k].first * kMs, segments[k].second});
    const std::int64_t end = k + 1 < segments.size() ? segments[k + 1].first : end_ms;
    t.times[segments[k].second] += (end - segments[k].first) * kMs;
  }
  return t;
}


// Python threads of which `gil_ms` of every 100 ms are GIL waits, the rest on a CPU.
ThreadStates gil_bound(std::int64_t gil_ms, int threads = 2, const std::string& gil = "located") {
  std::vector<ThreadRecord> list;
  for (int k = 0; k < threads; ++k)
    list.push_back(thread_of(200 + k, "Thread-" + std::to_string(k + 1), {{0, ThreadState::cpu}, {100 - gil_ms, ThreadState::gil}}, 100));
  return states_of(std::move(list), gil);
}

RunRecord run_of(const std::string& case_name, const std::string& build, double wall_ms, int repeat,
                 std::optional<ThreadStates> states, double cpu_per_wall = 1.0) {
  RunRecord r = report_test::run_record("threads", case_name, build, wall_ms, repeat);
  r.cpu_per_wall = cpu_per_wall;
  r.thread_states = std::move(states);
  return r;
}

ReportModel model_of(const std::vector<RunRecord>& runs, std::vector<ViewSpec> views = {}) {
  MetaRecord meta;
  meta.experiment.name = "threads";
  meta.experiment.views = std::move(views);
  meta.machine = MachineRecord{"vm", "6.1", "x86_64", "AMD EPYC", 2, 2, 0};
  LoadedResults file;
  file.path = "threads.jsonl";
  file.lines.emplace_back(meta);
  for (const auto& r : runs) file.lines.emplace_back(r);
  return build_report_model(merge_results({file}), ReportOptions{});
}

// Shares as cell_readings reads them: every run told GIL waits apart.
ThreadShares shares(std::initializer_list<std::pair<ThreadState, double>> values, int threads = 4) {
  ThreadShares s;
  s.runs = s.gil_runs = 3;
  s.python_threads = threads;
  for (const auto& [state, share] : values) s.median[static_cast<std::size_t>(state)] = share;
  s.gil_wait = s.share(ThreadState::gil);
  return s;
}

std::vector<std::string> texts(const std::vector<Reading>& readings) {
  std::vector<std::string> out;
  for (const auto& r : readings) out.push_back(r.text);
  return out;
}

std::size_t column_of(const Table& t, const std::string& title) {
  for (std::size_t k = 0; k < t.columns.size(); ++k)
    if (t.columns[k].title == title) return k;
  return t.columns.size();
}

const ReportModel& threads_fixture() {
  static const ReportModel model = build_report_model(merge_files({report_test::fixture("report_threads.jsonl")}), {});
  return model;
}

}  // namespace

TEST_CASE("GIL wait column: the median share over the cell's measured ok runs, '-' without thread states", "[report][threads]") {
  RunRecord warmup = run_of("gil", "3.12", 50, 0, gil_bound(90));
  warmup.warmup = true;
  RunRecord failed = run_of("gil", "3.12", 50, 4, gil_bound(95));
  failed.status = RunStatus::error;
  const ReportModel m = model_of({warmup, run_of("gil", "3.12", 100, 1, gil_bound(20)), run_of("gil", "3.12", 110, 2, gil_bound(60)),
                                  run_of("gil", "3.12", 120, 3, gil_bound(50)), failed, run_of("plain", "3.12", 100, 1, std::nullopt),
                                  run_of("exec", "3.12", 100, 1, gil_bound(40, 2, "exec mode: the GIL was not located"))});
  const Section& s = m.sections[0];
  const Cell* gil = s.summary.cell("gil", "3.12");
  REQUIRE(gil->threads);
  CHECK(gil->threads->runs == 3);  // not the warm-up, not the error
  CHECK(*gil->threads->gil_wait == Approx(0.5));  // median of 0.2, 0.6, 0.5
  CHECK(gil->threads->python_threads == 2);
  CHECK(gil_wait_text(gil->threads) == "50 %");
  CHECK_FALSE(s.summary.cell("plain", "3.12")->threads);
  CHECK(gil_wait_text(s.summary.cell("plain", "3.12")->threads) == "-");
  // Thread states, but GIL waits not told from lock waits: the share would read 0 %, which it is not.
  REQUIRE(s.summary.cell("exec", "3.12")->threads);
  CHECK(gil_wait_text(s.summary.cell("exec", "3.12")->threads) == "?");

  const std::size_t col = column_of(s.details_table, "GIL wait");
  REQUIRE(col < s.details_table.columns.size());
  CHECK(s.details_table.columns[col].align == Align::right);
  std::map<std::string, std::string> shown;
  for (const auto& row : s.details_table.rows) shown[row[0]] = row[col];
  CHECK(shown == std::map<std::string, std::string>{{"gil", "50 %"}, {"plain", "-"}, {"exec", "?"}});

  // Every format with the grid shows it; the JSON export and the CSV carry the numbers.
  CHECK_THAT(render_text(m), Contains("GIL wait"));
  CHECK_THAT(render_markdown(m), Contains("| GIL wait |"));
  CHECK_THAT(render_html(m), Contains("<th>GIL wait</th>"));
  const json cells = summary_json(m)["experiments"][0]["cells"];
  for (const auto& c : cells) {
    if (c["case"] == "gil") {
      CHECK(c["gil_wait_share"].get<double>() == Approx(0.5));
      CHECK(c["thread_states"]["median_share"]["gil"].get<double>() == Approx(0.5));
      CHECK(c["thread_states"]["runs"] == 3);
    }
    if (c["case"] == "plain") CHECK(c["gil_wait_share"].is_null());
    if (c["case"] == "exec") CHECK(c["gil_wait_share"].is_null());
  }
  std::istringstream csv(runs_csv(m));
  std::string header, line;
  std::getline(csv, header);
  const auto names = split(header.substr(0, header.size() - 1), ',');
  const auto at = static_cast<std::size_t>(std::find(names.begin(), names.end(), "gil_wait_share") - names.begin());
  REQUIRE(at < names.size());
  std::vector<std::string> per_run;
  while (std::getline(csv, line)) per_run.push_back(split(line.substr(0, line.size() - 1), ',')[at]);
  // File order: the warm-up, three ok runs, the error, plain (none), exec (not told apart).
  REQUIRE(per_run.size() == 7);
  CHECK(std::stod(per_run[0]) == Approx(0.9));
  CHECK(std::stod(per_run[1]) == Approx(0.2));
  CHECK(per_run[5].empty());
  CHECK(per_run[6].empty());
}

TEST_CASE("GIL wait column: a file without thread states keeps its tables", "[report][threads]") {
  const ReportModel demo = report_test::demo_model();
  const Section& s = demo.sections[0];
  CHECK_FALSE(s.has_thread_states());
  CHECK(column_of(s.details_table, "GIL wait") == s.details_table.columns.size());
  CHECK(s.readings.empty());
  CHECK(render_text(demo).find("readings") == std::string::npos);
}

TEST_CASE("readings: each rule fires at its threshold and not below it", "[report][threads][readings]") {
  using S = ThreadState;
  SECTION("the GIL serialised the threads") {
    CHECK(texts(cell_readings(shares({{S::gil, 0.74}, {S::cpu, 0.26}}), 1.0)) ==
          std::vector<std::string>{"the Python threads waited for the GIL 74 % of their time: the GIL serialised them (n=3)"});
    // With the threads that waited (a main thread that only join()s is none of them), their own share.
    ThreadShares waiters = shares({{S::gil, 0.60}, {S::cpu, 0.20}, {S::lock, 0.20}});
    waiters.gil_waiters = 4;
    waiters.gil_waiters_share = 0.75;
    CHECK(texts(cell_readings(waiters, 1.0)) ==
          std::vector<std::string>{"4 threads waited for the GIL 75 % of their time (60 % of all the Python threads' time): "
                                   "the GIL serialised them (n=3)"});
    CHECK(cell_readings(shares({{S::gil, reading::kGilSerialised - 0.01}, {S::cpu, 0.76}}), 1.0).empty());
    // GIL waits not told apart in every run: no GIL reading, however large.
    ThreadShares untold = shares({{S::gil, 0.9}});
    untold.gil_runs = 1;
    CHECK(cell_readings(untold, 1.0).empty());
  }
  SECTION("a lock convoy") {
    CHECK(texts(cell_readings(shares({{S::lock, 0.95}}), 1.0)) ==
          std::vector<std::string>{"lock convoy: the threads spent 95 % of their time waiting on a lock (n=3)"});
    CHECK(cell_readings(shares({{S::lock, reading::kLockConvoy - 0.01}}), 1.0).empty());
    ThreadShares untold = shares({{S::lock, 0.95}});  // GIL waits would be counted as lock waits here
    untold.gil_runs = 0;
    untold.gil_wait.reset();
    CHECK(cell_readings(untold, 1.0).empty());
    // The threads that worked waited on a lock more than for the GIL (3.9's convoy: 4 workers, 38 % and 2 %),
    // though all the threads' lock share is under kLockConvoy.
    ThreadShares workers = shares({{S::lock, 0.5}, {S::cpu, 0.3}, {S::runqueue, 0.2}});
    workers.lock_waiters = 4;
    workers.lock_waiters_share = 0.38;
    workers.lock_waiters_gil_share = 0.02;
    CHECK(texts(cell_readings(workers, 1.4)) ==
          std::vector<std::string>{"4 threads took turns at a lock (or a queue), waiting on it 38 % of their time (for the GIL 2 %) (n=3)"});
    workers.lock_waiters_share = reading::kLockConvoyWorkers - 0.01;
    CHECK(cell_readings(workers, 1.4).empty());
    workers.lock_waiters_share = 0.38;
    workers.lock_waiters = 1;
    CHECK(cell_readings(workers, 1.4).empty());
  }
  SECTION("the convoy's threads: they work and wait on the lock again and again; a join() or one wait is not it") {
    Segments turns;  // 10 turns: 4 ms on a CPU, 6 ms waiting on the lock
    for (std::int64_t k = 0; k < kLockConvoyTurns; ++k) {
      turns.push_back({10 * k, ThreadState::cpu});
      turns.push_back({10 * k + 4, ThreadState::lock});
    }
    const auto s = thread_shares({run_of("locked", "3.9", 100, 0,
                                         states_of({thread_of(1, "main", {{0, ThreadState::lock}}, 100),
                                                    thread_of(2, "a", turns, 100), thread_of(3, "b", turns, 100),
                                                    thread_of(4, "once", {{0, ThreadState::cpu}, {40, ThreadState::lock}}, 100)}))});
    REQUIRE(s);
    CHECK(s->lock_waiters == 2);
    CHECK(s->lock_waiters_share == Approx(0.6));
    turns.resize(2 * (kLockConvoyTurns - 1));
    const auto fewer = thread_shares({run_of("locked", "3.9", 100, 0, states_of({thread_of(2, "a", turns, 90), thread_of(3, "b", turns, 90)}))});
    REQUIRE(fewer);
    CHECK(fewer->lock_waiters == 0);
  }
  SECTION("waiting for a core") {
    CHECK(texts(cell_readings(shares({{S::runqueue, 0.40}, {S::cpu, 0.6}}), 1.0)) ==
          std::vector<std::string>{"threads waited for a core 40 % of their time: more runnable threads than cores (n=3)"});
    CHECK(cell_readings(shares({{S::runqueue, reading::kWaitedForCore - 0.01}}), 1.0).empty());
  }
  SECTION("in parallel") {
    CHECK(texts(cell_readings(shares({{S::cpu, 0.96}, {S::gil, 0.021}}), 1.9)) ==
          std::vector<std::string>{"threads ran in parallel: 96 % on CPU, GIL waits under 3 % (n=3)"});
    CHECK(cell_readings(shares({{S::cpu, 0.96}, {S::gil, 0.021}}), reading::kParallelism).empty());  // not above it
    CHECK(cell_readings(shares({{S::cpu, 0.94}, {S::gil, reading::kParallelGilBelow}}), 1.9).empty());
    ThreadShares free_threaded = shares({{S::cpu, 0.96}});
    free_threaded.no_gil = true;
    CHECK(texts(cell_readings(free_threaded, 1.9)) == std::vector<std::string>{"threads ran in parallel: 96 % on CPU, no GIL (n=3)"});
  }
  SECTION("waiting for I/O") {
    CHECK(texts(cell_readings(shares({{S::io, 0.9}}), 0.1)) == std::vector<std::string>{"threads spent 90 % waiting for I/O (n=3)"});
    CHECK(cell_readings(shares({{S::io, reading::kIoBound - 0.01}}), 0.1).empty());
  }
  SECTION("one Python thread has nothing to contend") {
    CHECK(cell_readings(shares({{S::gil, 0.9}}, 1), 1.0).empty());
    CHECK(cell_readings(shares({{S::io, 0.9}}, 1), 1.0).empty());
  }
  SECTION("what dominated first, waiting for a core last") {
    const auto both = cell_readings(shares({{S::gil, 0.5}, {S::runqueue, 0.3}, {S::cpu, 0.2}}), 1.0);
    REQUIRE(both.size() == 2);
    CHECK(both[0].rule == ReadingRule::gil_serialised);
    CHECK(both[1].rule == ReadingRule::waited_for_core);
  }
}

TEST_CASE("readings: per cell in the grid's order, never for cells without thread states; every format shows them",
          "[report][threads][readings]") {
  const ReportModel m = model_of({run_of("b_gil", "3.12", 100, 0, gil_bound(60, 4)), run_of("b_gil", "3.14t", 100, 0, std::nullopt),
                                  run_of("a_lock", "3.14t", 100, 0, states_of({thread_of(1, "main", {{0, ThreadState::lock}}, 100),
                                                                                  thread_of(2, "w", {{0, ThreadState::lock}, {90, ThreadState::cpu}}, 100)})),
                                  run_of("a_lock", "3.12", 100, 0, std::nullopt)});
  const Section& s = m.sections[0];
  REQUIRE(s.readings.size() == 2);
  CHECK(s.readings[0].case_name == "b_gil");  // the grid's order: cases as first seen
  CHECK(s.readings[0].build == "3.12");
  CHECK(s.readings[0].rule == ReadingRule::gil_serialised);
  CHECK(s.readings[0].text ==
        "4 threads waited for the GIL 60 % of their time (60 % of all the Python threads' time): the GIL serialised them (n=1)");
  CHECK(s.readings[1].case_name == "a_lock");
  CHECK(s.readings[1].build == "3.14t");
  CHECK(s.readings[1].rule == ReadingRule::lock_convoy);

  const std::string text = render_text(m);
  const auto from = text.find("readings (");
  REQUIRE(from != std::string::npos);
  CHECK(text.find("\n  b_gil @ 3.12: 4 threads waited for the GIL 60 %", from) != std::string::npos);
  // Wrapped for an 80-column terminal.
  std::istringstream block(text.substr(from));
  for (std::string line; std::getline(block, line) && !line.empty();) CHECK(display_width(line) <= 80);
  CHECK_THAT(render_markdown(m), Contains("### Readings") && Contains("- **b_gil** @ 3.12: 4 threads waited for the GIL 60 %"));
  CHECK_THAT(render_html(m), Contains("<ul class=\"readings\">") && Contains("<li>lock convoy: the threads spent ") &&
                                 Contains(" — a_lock @ 3.14t</li>"));
  const json readings = summary_json(m)["experiments"][0]["readings"];
  REQUIRE(readings.size() == 2);
  CHECK(readings[0]["rule"] == "gil_serialised");
  CHECK(readings[1]["interpreter"] == "3.14t");
}

TEST_CASE("readings of the thread-states fixture: the GIL build serialised, the free-threaded one ran in parallel",
          "[report][threads][readings]") {
  const Section& s = threads_fixture().sections[0];
  std::vector<std::string> lines;
  for (const auto& r : s.readings) lines.push_back(r.case_name + " @ " + r.build + ": " + r.text);
  CHECK(lines == std::vector<std::string>{
                     "spin[threads=2] @ 3.13.0: 2 threads waited for the GIL 50 % of their time (31 % of all the Python threads' time): "
                     "the GIL serialised them (n=3; GIL wait 31–31 %)",
                     "spin[threads=2] @ 3.14.7t: threads ran in parallel: 61 % on CPU, no GIL (n=3)",
                     "spin[threads=4] @ 3.13.0: 4 threads waited for the GIL 75 % of their time (57 % of all the Python threads' time): "
                     "the GIL serialised them (n=3; GIL wait 57–57 %)",
                     "spin[threads=4] @ 3.14.7t: threads ran in parallel: 45 % on CPU, no GIL (n=3)",
                     "spin[threads=4] @ 3.14.7t: threads waited for a core 37 % of their time: more runnable threads than cores (n=3)"});
}

TEST_CASE("compare: both cells' GIL wait share and the change in points", "[report][compare][threads]") {
  const std::vector<ResultsLine> a{run_of("gil", "3.12", 100, 0, gil_bound(74)), run_of("gil", "3.12", 101, 1, gil_bound(74)),
                                   run_of("plain", "3.12", 100, 0, std::nullopt)};
  const std::vector<ResultsLine> b{run_of("gil", "3.12", 60, 0, gil_bound(12)), run_of("gil", "3.12", 61, 1, gil_bound(12)),
                                   run_of("plain", "3.12", 100, 0, gil_bound(30))};
  Comparison c = compare_runs(a, b, {});
  REQUIRE(c.rows.size() == 2);
  CHECK(*c.rows[0].gil_a == Approx(0.74));
  CHECK(*c.rows[0].gil_b == Approx(0.12));
  CHECK_FALSE(c.rows[1].gil_a);
  CHECK(*c.rows[1].gil_b == Approx(0.30));
  CHECK(c.has_gil_wait());

  const std::string text = render_comparison_text(c);
  CHECK_THAT(text, Contains("A GIL") && Contains("GIL Δ") && Contains("percentage points"));
  std::istringstream lines(text);
  std::string gil_line, plain_line;
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("threads", 0) == 0 && l.find(" gil ") != std::string::npos) gil_line = l;
    if (l.rfind("threads", 0) == 0 && l.find(" plain ") != std::string::npos) plain_line = l;
  }
  CHECK_THAT(gil_line, Contains("74 %") && Contains("12 %") && Contains("-62 pts"));
  CHECK_THAT(plain_line, Contains("30 %"));
  CHECK(plain_line.find("pts") == std::string::npos);  // no change without both sides
  CHECK_THAT(render_comparison_markdown(c), Contains("| A GIL | B GIL | GIL Δ | verdict |") && Contains("| 74 % | 12 % | -62 pts |"));
  const json j = comparison_json(c);
  CHECK(j["rows"][0]["gil_wait_share_a"].get<double>() == Approx(0.74));
  CHECK(j["rows"][0]["gil_wait_change_points"].get<double>() == Approx(-62));
  CHECK(j["rows"][1]["gil_wait_share_a"].is_null());
  CHECK(j["rows"][1]["gil_wait_change_points"].is_null());

  // Without thread states on either side the table is as it was.
  const std::vector<ResultsLine> bare{run_of("plain", "3.12", 100, 0, std::nullopt)};
  const Comparison none = compare_runs(bare, bare, {});
  CHECK_FALSE(none.has_gil_wait());
  CHECK(render_comparison_text(none).find("GIL") == std::string::npos);
}

TEST_CASE("views: kind = gil_wait shows the GIL wait share per build", "[report][views][threads]") {
  ViewSpec v{"GIL wait, 4 threads", ViewKind::gil_wait, "gil", "", "", "", std::nullopt};
  const ReportModel m = model_of({run_of("gil", "3.12", 100, 0, gil_bound(74)), run_of("gil", "3.14t", 100, 0, gil_bound(0, 2, "none")),
                                  run_of("gil", "3.13", 100, 0, std::nullopt)},
                                 {v});
  const Section& s = m.sections[0];
  REQUIRE(s.headlines.size() == 1);
  const Headline& h = s.headlines[0];
  CHECK(h.unit == "%");
  REQUIRE(h.values.size() == 3);
  CHECK(*h.values[0].value == Approx(74));
  CHECK(h.values[0].text == "74 % n=1");
  CHECK(*h.values[1].value == Approx(0));
  CHECK_FALSE(h.values[2].value);  // no thread states
  CHECK(h.values[2].text == "-");
  CHECK_THAT(h.how, Contains("waiting for the GIL"));
  CHECK(summary_json(m)["experiments"][0]["views"][0]["kind"] == "gil_wait");
  CHECK(report_test::count(render_html(m), "<rect class=\"viewbar\"") == 2);
  // As the details' column shows it: whole percentages (the fixture's 3.13.0 share is 0.569).
  const Headline& fixture_view = threads_fixture().sections[0].headlines.back();
  CHECK(fixture_view.spec.kind == ViewKind::gil_wait);
  CHECK(fixture_view.values[0].text == "57 % (57–57) n=3");

  // Recorded in the meta record and read back as the same kind.
  MetaRecord meta;
  meta.format = kResultsFormat;
  meta.experiment.document = {{"name", "threads"}, {"views", json::array({view_to_json(v)})}};
  const auto back = std::get<MetaRecord>(line_from_json(to_json(ResultsLine{meta})));
  REQUIRE(back.experiment.views.size() == 1);
  CHECK(back.experiment.views[0].kind == ViewKind::gil_wait);
}

TEST_CASE("loader: [[view]] kind = gil_wait names a case and no key", "[config][loader][views][threads]") {
  gilhost_test::TempDir dir;
  const std::string path = (dir / "exp.toml").string();
  gilhost_test::write_file(dir / "s.py", "def run(**kw):\n    return kw\n");
  const std::string head = "[experiment]\nscript = \"s.py\"\n[[case]]\nname = \"one\"\ncall = \"run\"\n";
  const Experiment ex = load_experiment_text(head + "[[view]]\nkind = \"gil_wait\"\na = \"one\"\n", path, "");
  REQUIRE(ex.views.size() == 1);
  CHECK(ex.views[0].kind == ViewKind::gil_wait);
  CHECK(ex.views[0].title == "one GIL wait");
  try {
    load_experiment_text(head + "[[view]]\nkind = \"gil_wait\"\na = \"one\"\nkey = \"x\"\n", path, "");
    FAIL("a gil_wait view with a key was accepted");
  } catch (const ConfigErrors& e) {
    REQUIRE(e.errors().size() == 1);
    CHECK_THAT(e.errors()[0].message, Contains("'key' is not for kind = \"gil_wait\""));
    CHECK(e.errors()[0].where.line == 9);
  }
}

TEST_CASE("trace export: one process per run, one track per thread, one complete event per segment", "[report][threads][trace]") {
  ThreadStates states = states_of({thread_of(100, "python3", {{0, ThreadState::cpu}, {20, ThreadState::lock}, {90, ThreadState::cpu}}, 100),
                                   thread_of(101, "Thread-1", {{20, ThreadState::cpu}, {30, ThreadState::gil}, {50, ThreadState::runqueue},
                                                               {55, ThreadState::cpu}}, 90),
                                   thread_of(300, "gilhost-load", {{5, ThreadState::io}}, 95, false)});
  states.threads[2].pid = 300;
  RunRecord measured = run_of("spin", "3.12.1", 90, 2, states);
  RunRecord warmup = run_of("spin", "3.12.1", 90, 0, states);
  warmup.warmup = true;
  MetaRecord meta;
  meta.format = kResultsFormat;
  meta.experiment.document = {{"name", "threads"}};
  const std::vector<ResultsLine> lines{meta, warmup, run_of("plain", "3.12.1", 50, 1, std::nullopt), measured};

  // As a user runs it: gilhost report FILE --format trace -o out.json
  gilhost_test::TempDir dir;
  gilhost_test::write_file(dir / "r.jsonl", to_jsonl(lines));
  ReportOptionsCli o;
  o.files = {(dir / "r.jsonl").string()};
  o.format = "trace";
  o.output = (dir / "out.json").string();
  REQUIRE(cmd_report(o) == 0);
  const json trace = json::parse(gilhost_test::slurp(dir / "out.json"));
  CHECK(trace["displayTimeUnit"] == "ms");
  const json& events = trace["traceEvents"];

  std::map<std::int64_t, std::string> processes;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::vector<json> complete;
  for (const auto& ev : events) {
    if (ev["ph"] == "M" && ev["name"] == "process_name") processes[ev["pid"]] = ev["args"]["name"];
    if (ev["ph"] == "M" && ev["name"] == "thread_name") thread_names[{ev["pid"], ev["tid"]}] = ev["args"]["name"];
    if (ev["ph"] == "X") complete.push_back(ev);
  }
  // Two runs have thread states (the warm-up and the measured run), in file order; "plain" has none.
  CHECK(processes == std::map<std::int64_t, std::string>{{1, "threads / spin / 3.12.1 / repeat 0 (warm-up)"},
                                                          {2, "threads / spin / 3.12.1 / repeat 2"}});
  CHECK(thread_names[{2, 100}] == "python3 (pid 100)");  // two processes in the run: each thread says whose
  CHECK(thread_names[{2, 101}] == "Thread-1 (pid 100)");
  CHECK(thread_names[{2, 300}] == "gilhost-load (pid 300) [not Python]");

  // Every segment of the measured run: one X event, in order, at its time, for its thread.
  std::vector<json> run2;
  for (const auto& ev : complete)
    if (ev["pid"] == 2) run2.push_back(ev);
  std::size_t n = 0;
  for (const auto& t : measured.thread_states->threads)
    for (std::size_t k = 0; k < t.timeline.size(); ++k, ++n) {
      REQUIRE(n < run2.size());
      const json& ev = run2[n];
      const std::int64_t end = k + 1 < t.timeline.size() ? t.timeline[k + 1].start_ns : t.end_ns;
      CHECK(ev["tid"] == t.tid);
      CHECK(ev["ts"].get<double>() == Approx(static_cast<double>(t.timeline[k].start_ns) / 1e3));
      CHECK(ev["dur"].get<double>() == Approx(static_cast<double>(end - t.timeline[k].start_ns) / 1e3));
      CHECK(ev["name"] == thread_state_label(t.timeline[k].state));
      CHECK(ev["args"]["state"] == thread_state_name(t.timeline[k].state));
    }
  CHECK(n == 8);
  CHECK(run2.size() == n);
  CHECK(complete.size() == 2 * n);
  CHECK(run2[3]["ts"].get<double>() == Approx(20000));  // Thread-1 starts at 20 ms: 20000 µs
  CHECK(run2[4]["dur"].get<double>() == Approx(20000));  // its GIL wait, 30 to 50 ms
}

TEST_CASE("trace export: a file without thread states gives an empty trace", "[report][threads][trace]") {
  const ReportModel demo = report_test::demo_model();
  CHECK(traced_runs(demo) == 0);
  const json trace = chrome_trace(demo);
  CHECK(trace["traceEvents"].empty());
  CHECK(traced_runs(threads_fixture()) == 18);
}
