// report/evidence and what the report model does with it, on hand-made records: a ratio whose interval
// holds 1 (or that has no 95 % interval) is no speedup; an unstable cell is marked with its reason; a cell
// whose threads were seen for under 90 % of the tree's CPU time has an unknown GIL wait (null, "?"); the
// summary JSON carries n and the interval of every figure; precision per cell.
#include <catch2/catch.hpp>

#include "report/evidence.hpp"
#include "report/export.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/text.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

RunRecord run(const std::string& case_name, const std::string& build, double wall_ms, int repeat) {
  return report_test::run_record("ev", case_name, build, wall_ms, repeat);
}

// Thread states of two Python threads: `gil` of their time waiting for the GIL, the rest on a CPU.
ThreadStates two_threads(double gil, std::optional<double> coverage, const std::string& why = "") {
  ThreadStates ts;
  ts.gil = "located";
  ts.coverage = coverage;
  ts.coverage_why = why;
  for (int k = 0; k < 2; ++k) {
    ThreadRecord t;
    t.pid = 10;
    t.tid = 10 + k;
    t.name = "python3";
    t.gil_located = true;
    t.start_ns = 0;
    t.end_ns = 1000000000;
    t.times.ns[static_cast<std::size_t>(ThreadState::gil)] = static_cast<std::int64_t>(gil * 1e9);
    t.times.ns[static_cast<std::size_t>(ThreadState::cpu)] = static_cast<std::int64_t>((1 - gil) * 1e9);
    ts.python_totals += t.times;
    ts.threads.push_back(t);
  }
  return ts;
}

// One experiment: `seq` and `threads` on build "3.12", one run per entry (wall ms), a ratio view
// threads-over-seq, and optionally the runs' thread states.
ReportModel model_of(const std::vector<double>& seq, const std::vector<double>& threads, std::optional<double> precision = {},
                     const std::vector<ThreadStates>& states = {}) {
  MetaRecord meta;
  meta.experiment.name = "ev";
  meta.experiment.cases = {CaseInfo{"seq", "", "seq", {}, {}}, CaseInfo{"threads", "", "threads", {}, {}}};
  meta.experiment.precision = precision;
  ViewSpec v;
  v.title = "8 threads speedup over sequential";
  v.kind = ViewKind::ratio;
  v.a = "seq";
  v.b = "threads";
  meta.experiment.views = {v};
  meta.machine = MachineRecord{"vm", "6.1", "x86_64", "AMD EPYC", 2, 2, 0};
  LoadedResults file;
  file.path = "ev.jsonl";
  file.lines.emplace_back(meta);
  for (std::size_t k = 0; k < seq.size(); ++k) file.lines.emplace_back(run("seq", "3.12", seq[k], static_cast<int>(k)));
  for (std::size_t k = 0; k < threads.size(); ++k) {
    RunRecord r = run("threads", "3.12", threads[k], static_cast<int>(k));
    if (k < states.size()) r.thread_states = states[k];
    r.load_avg = 4.5 + static_cast<double>(k) / 10;
    file.lines.emplace_back(r);
  }
  return build_report_model(merge_results({file}), ReportOptions{});
}

}  // namespace

TEST_CASE("evidence: a ratio's direction only where its 95 % interval excludes 1", "[evidence]") {
  // One pair: no interval, no direction, however large.
  const Estimate one = paired_ratio_estimate({{183, 100}});
  CHECK(ratio_direction(one) == Direction::no_difference);
  CHECK(ratio_cell(one) == "1.83x? n=1");
  CHECK(ratio_cell(one, false) == "1.83x?");
  // Three pairs all 1.8x: the range, at 75 % only.
  const Estimate three = paired_ratio_estimate({{180, 100}, {181, 100}, {185, 100}});
  CHECK(ratio_direction(three) == Direction::no_difference);
  CHECK_THAT(ratio_cell(three), Contains("1.82x? (1.80–1.85) n=3"));
  CHECK_THAT(no_difference_why(three), Contains("no 95 % interval below 6 runs"));
  // Eight pairs that straddle 1: a 95 % interval that holds 1.
  const Estimate straddles = paired_ratio_estimate({{90, 100}, {110, 100}, {95, 100}, {105, 100}, {99, 100}, {102, 100}, {97, 100}, {104, 100}});
  REQUIRE(straddles.interval);
  CHECK(straddles.interval->at_95());
  CHECK(ratio_direction(straddles) == Direction::no_difference);
  CHECK_THAT(ratio_cell(straddles), Contains("no diff."));
  // Six pairs all above 1: a direction.
  const Estimate up = paired_ratio_estimate({{180, 100}, {181, 100}, {185, 100}, {179, 100}, {182, 100}, {184, 100}});
  CHECK(ratio_direction(up) == Direction::higher);
  CHECK_THAT(ratio_cell(up), Contains("1.8") && Contains("x (1.79–1.85)"));
}

TEST_CASE("evidence: the unpaired ratio's Mann-Whitney interval", "[evidence][interval]") {
  // 3 against 3: the widest interval is all 9 differences' range, level 1 - 2/20 = 90 %.
  const Estimate e = unpaired_ratio_estimate({2, 2.1, 2.2}, {1, 1.05, 1.1});
  CHECK(e.n == 3);
  REQUIRE(e.interval);
  CHECK(e.interval->level == Approx(0.9));
  CHECK(e.interval->lo == Approx(2.0 / 1.1));
  CHECK(e.interval->hi == Approx(2.2 / 1.0));
  CHECK(e.point == Approx(2.0).epsilon(0.01));
  // 4 against 4 reach 95 %: 1 - 2/70.
  const Estimate four = unpaired_ratio_estimate({2, 2.1, 2.2, 2.3}, {1, 1.05, 1.1, 1.15});
  REQUIRE(four.interval);
  CHECK(four.interval->at_95());
  CHECK(four.excludes(1.0));
}

TEST_CASE("evidence: a headline ratio of one run is not a speedup", "[evidence][views]") {
  const ReportModel m = model_of({183}, {100});
  const Headline& h = m.sections.at(0).headlines.at(0);
  REQUIRE(h.values.size() == 1);
  CHECK_FALSE(h.values[0].supported);
  CHECK(h.values[0].text == "1.83x? n=1");
  const std::string text = render_text(m, TextOptions{});
  CHECK_THAT(text, Contains("1.83x? n=1"));
  CHECK_THAT(text, !Contains("1.83x ") && !Contains("no diff."));
  // Under the views, what the "?" means; no line for a "no diff." that is not shown.
  CHECK_THAT(text, Contains("x?: fewer than 6 pairs, too few for a 95 % interval (one pair has none)"));
  CHECK_THAT(text, !Contains("no diff.: "));
  const json view = summary_json(m)["experiments"][0]["views"][0]["values"][0];
  CHECK(view["n"] == 1);
  CHECK(view["ci95"].is_null());
  CHECK(view["supported"] == false);

  // Six rounds all near 1.8x: a speedup, with its interval and n.
  const ReportModel six = model_of({180, 181, 185, 179, 182, 184}, {100, 100, 100, 100, 100, 100});
  const HeadlineValue& v = six.sections.at(0).headlines.at(0).values.at(0);
  CHECK(v.supported);
  CHECK_THAT(v.text, Contains("x (1.79–1.85) n=6"));
  const json j = summary_json(six)["experiments"][0]["views"][0]["values"][0];
  CHECK(j["n"] == 6);
  REQUIRE(j["ci95"].is_array());
  CHECK(j["ci95"][0].get<double>() == Approx(1.79));
  CHECK_THAT(render_text(six, TextOptions{}), !Contains("x?: ") && !Contains("no diff.: "));  // nothing to explain
}

TEST_CASE("evidence: wall_s carries ci95, or the level the range reaches", "[evidence][json]") {
  const json cells = summary_json(model_of({100, 101, 102}, {50, 51, 52, 53, 54, 55}))["experiments"][0]["cells"];
  const json& seq = cells[0]["wall_s"];
  CHECK(seq["n"] == 3);
  CHECK(seq["ci95"].is_null());
  CHECK(seq["ci"]["level"].get<double>() == Approx(0.75));
  CHECK(seq["ci"]["lo"].get<double>() == Approx(0.100));
  const json& threads = cells[1]["wall_s"];
  CHECK(threads["n"] == 6);
  REQUIRE(threads["ci95"].is_array());
  CHECK(threads["ci95"][0].get<double>() == Approx(0.050));
  CHECK(threads["ci95"][1].get<double>() == Approx(0.055));
}

TEST_CASE("evidence: an unstable cell is marked with its reason", "[evidence]") {
  SECTION("an outlier run, with the load average beside its runs") {
    const ReportModel m = model_of({100, 100, 100, 100, 100}, {100, 101, 99, 100, 160, 100});
    const Cell* c = m.sections[0].summary.cell("threads", "3.12");
    REQUIRE(c);
    CHECK(c->stability.outliers);
    CHECK(c->stability.outlier_runs == std::vector<int>{5});
    CHECK_THAT(c->stability.why, Contains("outlier run #5 (160 ms)"));
    CHECK_THAT(c->stability.why, Contains("load average up to 5.0"));
    CHECK_FALSE(m.sections[0].summary.cell("seq", "3.12")->stability.unstable());
    const std::string text = render_text(m, TextOptions{});
    CHECK_THAT(text, Contains("unstable cells (!)"));
    CHECK_THAT(text, Contains("threads @ 3.12 !: ") && Contains("; outlier run #5 (160 ms) against a median of 100 ms"));
    const json j = summary_json(m)["experiments"][0]["cells"][1]["stability"];
    CHECK(j["unstable"] == true);
    CHECK(j["outlier_runs"] == json::array({5}));
  }
  SECTION("with the host's steal, where a run saw a per cent or more") {
    std::vector<ThreadStates> states(6);
    states[2].steal_share = 0.004;
    states[4].steal_share = 0.062;
    const ReportModel m = model_of({100, 100, 100}, {100, 101, 99, 100, 160, 100}, {}, states);
    const Cell* c = m.sections[0].summary.cell("threads", "3.12");
    REQUIRE(c);
    CHECK_THAT(c->stability.why, Contains("the virtual machine's host took up to 6 % of its CPUs (steal)"));
    // And the section says it once, with how many runs: whatever their cells' stability.
    CHECK_THAT(render_text(m, TextOptions{}),
               Contains("note: the virtual machine's host took up to 6 % of its CPUs (steal) in 1 of 9 measured runs"));
    states[4].steal_share = 0.009;
    const ReportModel quiet = model_of({100, 100, 100}, {100, 101, 99, 100, 160, 100}, {}, states);
    CHECK_THAT(quiet.sections[0].summary.cell("threads", "3.12")->stability.why, !Contains("steal"));
    CHECK_THAT(render_text(quiet, TextOptions{}), !Contains("steal"));
  }
  SECTION("two modes") {
    const Stability s = assess_stability(model_of({}, {100, 101, 100, 150, 151, 150}).sections[0].summary.cell("threads", "3.12")->runs);
    CHECK(s.two_modes);
    CHECK(s.low_mode == 3);
    CHECK(s.high_mode == 3);
    CHECK_THAT(s.why, Contains("two modes: 3 runs near 100 ms, 3 near 150 ms"));
  }
  SECTION("a wide spread") {
    const Stability s = assess_stability(model_of({}, {80, 100, 120}).sections[0].summary.cell("threads", "3.12")->runs);
    CHECK(s.wide);
    CHECK_THAT(s.why, Contains("wide spread: ±20 %"));
  }
  SECTION("steady runs are not flagged") {
    const Stability s = assess_stability(model_of({}, {100, 101, 100, 102, 99, 100}).sections[0].summary.cell("threads", "3.12")->runs);
    CHECK_FALSE(s.unstable());
    CHECK(s.why.empty());
  }
}

TEST_CASE("evidence: GIL wait unknown below 90 % coverage, or with an unlocated GIL", "[evidence][threads]") {
  SECTION("coverage 0.07: null in JSON, ? in text, with the reason") {
    const std::string why = "1,560 threads lived between two readings";
    const ReportModel m = model_of({100}, {100, 100, 100}, {}, {two_threads(0.59, 0.07, why), two_threads(0.6, 0.95), two_threads(0.6, 0.95)});
    const Cell* c = m.sections[0].summary.cell("threads", "3.12");
    REQUIRE(c->threads);
    CHECK_FALSE(c->threads->gil_wait);
    CHECK_THAT(c->threads->gil_unknown_why, Contains(why));
    const json cell = summary_json(m)["experiments"][0]["cells"][1];
    CHECK(cell["gil_wait_share"].is_null());
    CHECK_THAT(cell["thread_states"]["gil_wait_unknown_why"].get<std::string>(), Contains("7 % of the tree's CPU time"));
    const std::string text = render_text(m, TextOptions{});
    CHECK_THAT(text, Contains("GIL wait unknown (?)"));
    CHECK_THAT(text, Contains("threads @ 3.12: GIL wait ? — threads whose GIL waits are known account for 7 %"));
    CHECK(m.sections[0].readings.empty());  // no reading claims a GIL share nobody saw
  }
  SECTION("coverage at 0.9 and over: known, with its n and interval") {
    const ReportModel m = model_of({100}, {100, 100, 100}, {}, {two_threads(0.5, 0.95), two_threads(0.6, 0.92), two_threads(0.55, std::nullopt)});
    const Cell* c = m.sections[0].summary.cell("threads", "3.12");
    REQUIRE(c->threads->gil_wait);
    CHECK(*c->threads->gil_wait == Approx(0.55));
    REQUIRE(c->threads->gil_wait_estimate);
    CHECK(c->threads->gil_wait_estimate->n == 3);
    const json cell = summary_json(m)["experiments"][0]["cells"][1];
    CHECK(cell["gil_wait_share"].get<double>() == Approx(0.55));
    CHECK(cell["thread_states"]["gil_wait"]["ci"]["level"].get<double>() == Approx(0.75));
  }
  SECTION("a process whose GIL was not located, its threads waiting on a futex: unknown, never 0") {
    ThreadStates ts = two_threads(0, 1.0);
    ThreadRecord worker = ts.threads[0];
    worker.pid = 20;
    worker.tid = 21;
    worker.gil_located = false;
    worker.times = ThreadTimes{};
    worker.times.ns[static_cast<std::size_t>(ThreadState::lock)] = 400000000;
    worker.times.ns[static_cast<std::size_t>(ThreadState::cpu)] = 600000000;
    ts.threads.push_back(worker);
    ts.python_totals += worker.times;
    const ReportModel m = model_of({100}, {100}, {}, {ts});
    const Cell* c = m.sections[0].summary.cell("threads", "3.12");
    CHECK_FALSE(c->threads->gil_wait);
    CHECK_THAT(c->threads->gil_unknown_why, Contains("GIL of process 20"));
    CHECK(gil_wait_text(c->threads) == "?");
  }
}

TEST_CASE("evidence: a reading claims what its interval supports", "[evidence][readings]") {
  // GIL waits of 20 %, 50 %, 55 %: the median says serialised (>= 25 %), one run does not.
  ThreadShares s;
  s.runs = 3;
  s.gil_runs = 3;
  s.python_threads = 2;
  s.gil_wait = 0.5;
  Estimate e = median_estimate({0.2, 0.5, 0.55});
  s.gil_wait_estimate = e;
  CHECK(cell_readings(s, 1.0).empty());
  s.gil_wait_estimate = median_estimate({0.45, 0.5, 0.55});
  const auto readings = cell_readings(s, 1.0);
  REQUIRE(readings.size() == 1);
  CHECK(readings[0].n == 3);
  CHECK_THAT(readings[0].text, Contains("(n=3; GIL wait 45–55 %)"));
}

TEST_CASE("evidence: precision per cell, and a budget that stopped one short", "[evidence][precision]") {
  SECTION("met") {
    const ReportModel m = model_of({100, 100, 100, 100, 100, 100, 100, 100}, {100}, 0.03);
    const Cell* c = m.sections[0].summary.cell("seq", "3.12");
    CHECK(c->precision.stopped_by == "target");
    const json p = summary_json(m)["experiments"][0]["cells"][0]["precision"];
    CHECK(p["target"].get<double>() == Approx(0.03));
    CHECK(p["achieved"].get<double>() == Approx(0.0));
    CHECK(p["stopped_by"] == "target");
  }
  SECTION("a budget stopped it short") {
    std::vector<RunRecord> runs{run("seq", "3.12", 100, 0), run("seq", "3.12", 130, 1)};
    runs[1].stopped = "2 of 10 runs: the cell's time budget of 1 s was spent (1.2 s; --max-cell-time)";
    ExperimentInfo ex;
    ex.precision = 0.03;
    const CellPrecision p = cell_precision(median_estimate({0.1, 0.13}), runs, ex);
    CHECK(p.stopped_by == "budget");
    CHECK(p.short_of_target());
    CHECK_THAT(precision_note("seq @ 3.12", p), Contains("time budget stopped it"));
  }
  SECTION("no target: the repeat count decided") {
    const ReportModel m = model_of({100, 101, 102}, {100});
    CHECK(m.sections[0].summary.cell("seq", "3.12")->precision.stopped_by == "repeat");
    CHECK(summary_json(m)["experiments"][0]["cells"][0]["precision"]["target"].is_null());
  }
}
