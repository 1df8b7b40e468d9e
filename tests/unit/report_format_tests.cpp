// The report formats on the fixture results file: Markdown, the HTML page, the JSON and CSV exports.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "report/export.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/model.hpp"
#include "report/thread_lanes.hpp"
#include "results/record_json.hpp"
#include "report_test_util.hpp"

using namespace gilhost;
using report_test::count;
using nlohmann::json;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Cells of a Markdown table row: split on pipes that are not escaped.
std::vector<std::string> md_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      cur += line.substr(i, 2);
      ++i;
    } else if (line[i] == '|') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, in_quotes = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      quoted = false;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      quoted = false;
      ++i;
    } else {
      field += c;
    }
  }
  REQUIRE(!in_quotes);
  REQUIRE(field.empty());  // the last record ends with CRLF too
  return rows;
}

// Every element closed in order (void elements and self-closing SVG elements aside).
bool balanced_markup(const std::string& html, std::string& problem) {
  static const std::set<std::string> kVoid{"meta", "br", "hr", "img", "input", "link", "col", "wbr"};
  std::vector<std::string> stack;
  std::size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    const std::size_t end = html.find('>', i);
    if (end == std::string::npos) {
      problem = "unterminated tag";
      return false;
    }
    std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty() || tag[0] == '!') continue;
    if (tag == "style" || tag.rfind("style ", 0) == 0) {  // CSS may hold '>'
      i = html.find("</style>", i);
      if (i == std::string::npos) {
        problem = "<style> never closed";
        return false;
      }
      i += 8;
      continue;
    }
    const bool closing = tag[0] == '/';
    const bool self_closing = tag.back() == '/';
    std::string name = tag.substr(closing ? 1 : 0);
    name = name.substr(0, name.find_first_of(" \n/"));
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        problem = "</" + name + "> closes <" + (stack.empty() ? "nothing" : stack.back()) + ">";
        return false;
      }
      stack.pop_back();
    } else if (!self_closing && !kVoid.count(name)) {
      stack.push_back(name);
    }
  }
  if (!stack.empty()) problem = "<" + stack.back() + "> never closed";
  return stack.empty();
}

}  // namespace

TEST_CASE("runs per cell: a precision target's count is where a cell starts, not what it ran", "[report][markdown]") {
  gilhost::MergedResults in = gilhost::merge_files({report_test::fixture("report_demo.jsonl")});
  for (auto& line : in.lines)
    if (auto* meta = std::get_if<gilhost::MetaRecord>(&line)) meta->experiment.precision = 0.05;
  const std::string md = render_markdown(gilhost::build_report_model(in, {}));
  CHECK(contains(md, "3 measured runs per cell or more, until its median is known to ±5 % or its time budget is spent"));
  CHECK(!contains(md, "3 measured runs per cell, 0 warm-up"));
}

TEST_CASE("Markdown: machine, builds, grid, details, failures, skips, article", "[report][markdown]") {
  ReportModel model = report_test::demo_model();
  const std::string md = render_markdown(model);
  CHECK(contains(md, "# gilhost report\n"));
  CHECK(contains(md, "## report_demo — report fixture\n"));
  CHECK(contains(md, "3 measured runs per cell, 0 warm-up"));
  // The machine and each build's version, kind, mode and compiler.
  CHECK(contains(md, "| host | CPU | cores | kernel | arch | memory |"));
  CHECK(contains(md, "| vm | AMD EPYC | 2 | Linux "));
  CHECK(contains(md, "| build | version | free-threaded | mode | compiler | found via | host | executable |"));
  CHECK(contains(md, "| 3.12.1 | 3.12.1 | no | embed | gcc | pyenv | vm | `"));
  CHECK(contains(md, "<details><summary>configure flags</summary>"));
  CHECK(count(md, "--enable-shared") == 3);
  // The grid.
  CHECK(contains(md, "| case | 3.9.18 | 3.12.1 | 3.13.0 |\n|---|---|---|---|\n"));
  CHECK(contains(md, "| work | "));
  CHECK(contains(md, "| subinterp | skipped | "));
  CHECK(contains(md, "KeyError ✓ [error]"));
  // Details, failures, skips with reasons, the article.
  CHECK(contains(md, "### Details\n"));
  CHECK(contains(md, "| spawn | 3.12.1 | 3 | "));
  CHECK(contains(md, "### Expectations not met\n"));
  CHECK(count(md, "- ✗ **wrong** @ ") == 3);
  CHECK(contains(md, "(3 of 3 runs): result.a == 8: got 7 (fails on purpose: the report must show it)"));
  CHECK(contains(md, "### Skipped\n"));
  CHECK(contains(md, "- subinterp @ 3.9.18: subinterpreters with their own GIL need Python 3.12+"));
  CHECK(contains(md, "gilhost needs CPython 3.9 or newer"));
  CHECK(contains(md, "| work | about 50 ms of pure-Python work |"));
  CHECK_FALSE(contains(md, "### vs "));

  // Every row of every table has as many cells as its header.
  std::size_t header_cells = 0;
  int tables = 0;
  for (const auto& line : lines_of(md)) {
    if (line.empty() || line[0] != '|') {
      header_cells = 0;
      continue;
    }
    const auto cells = md_cells(line);
    if (header_cells == 0) {
      header_cells = cells.size();
      ++tables;
    } else {
      INFO(line);
      CHECK(cells.size() == header_cells);
    }
  }
  CHECK(tables == 5);  // machine, builds, grid, details, article
}

TEST_CASE("Markdown: the vs-baseline column and escaping", "[report][markdown]") {
  const std::string md = render_markdown(report_test::demo_model("3.12"));
  CHECK(contains(md, "### vs 3.12\n"));
  CHECK(contains(md, "| vs 3.12 | peak RSS |"));
  CHECK(contains(md, "| work | 3.12.1 | 3 | "));
  CHECK(markdown_escape("a|b <c> *d* `e`\nf") == "a\\|b &lt;c&gt; \\*d\\* \\`e\\`<br>f");
}

TEST_CASE("HTML: one self-contained page with the grid, bars, RSS lines and metadata", "[report][html]") {
  ReportModel model = report_test::demo_model("3.12");
  const std::string html = render_html(model);
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(contains(html, "<meta charset=\"utf-8\">"));
  CHECK(contains(html, "<style>"));
  // Nothing to fetch, nothing to run.
  CHECK_FALSE(contains(html, "<script"));
  CHECK_FALSE(contains(html, "<link"));
  CHECK_FALSE(contains(html, "src="));
  CHECK_FALSE(contains(html, "url("));
  CHECK_FALSE(contains(html, "@import"));
  // Any URL but the SVG namespace (counting "://", not "http": the page shows paths, which may contain "http").
  CHECK(count(html, "://") == count(html, "http://www.w3.org/2000/svg"));
  std::string problem;
  const bool balanced = balanced_markup(html, problem);
  INFO(problem);
  CHECK(balanced);

  const Section& s = model.sections[0];
  std::size_t timed = 0;
  for (const auto& [k, c] : s.summary.cells) timed += c.wall_s.n > 0;
  CHECK(timed == 14);
  CHECK(count(html, "<svg class=\"bars\"") == s.summary.cases.size());
  CHECK(count(html, "<rect class=\"bar\"") == timed);
  CHECK(count(html, "<svg class=\"rss\"") == s.summary.cases.size());
  CHECK(count(html, "<polyline class=\"rssline\"") == timed);
  CHECK(count(html, "class=\"whisker\"") == 3 * timed);  // 3 runs each: a line and two caps
  CHECK(contains(html, ">skipped</text>"));  // subinterp on 3.9
  // The grid: 5 cases x 3 builds, the failing ones marked; the metadata.
  CHECK(count(html, "<td class=\"case\">") == 5);
  CHECK(count(html, "<td class=\"fail\"") == 3);
  CHECK(count(html, "<td class=\"skip\">skipped</td>") == 1);
  CHECK(contains(html, "<td>AMD EPYC</td>"));
  CHECK(contains(html, "<td>gcc</td>"));
  CHECK(count(html, "<code class=\"flags\">") == 3);  // each build's configure flags, folded
  CHECK(contains(html, "<th>vs 3.12</th>"));
  CHECK(contains(html, "<th>3.12.1 <span class=\"muted\">(baseline)</span></th>"));
  CHECK(count(html, "<br><span class=\"muted\">vs 3.12: ") == 9);  // 2 builds x 5 cases, less subinterp on 3.9; not the baseline
  CHECK(contains(html, "result.a == 8: got 7"));
  CHECK(contains(html, "subinterpreters with their own GIL need Python 3.12+"));
  CHECK(contains(html, "about 50 ms of pure-Python work"));
  // A bar's data is the cell's median.
  const Cell* c = s.summary.cell("spawn", "3.13.0");
  CHECK(contains(html, fmt::format("data-median-s=\"{:.6g}\"", c->wall_s.median)));
}

TEST_CASE("HTML: escaping and axis ticks", "[report][html]") {
  CHECK(html_escape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  auto t = nice_ticks(0.0546);
  CHECK(t.front() == 0);
  CHECK(t.back() >= 0.0546);
  CHECK(t.size() <= 8);
  CHECK(t[1] == Approx(0.02));  // steps of 1, 2 or 5 x 10^k: 0, 0.02, 0.04, 0.06
  CHECK(nice_ticks(348e6, 4).back() == Approx(400e6));
  CHECK(nice_ticks(0) == std::vector<double>{0, 1});
  CHECK(nice_ticks(1.0).back() == Approx(1.0));
}

TEST_CASE("several experiments in one file: one section each", "[report][html][markdown]") {
  MergedResults m = merge_results({load_results_ordered(report_test::fixture("report_demo.jsonl")),
                                   load_results_ordered(report_test::fixture("report_race_a.jsonl"))});
  ReportModel model = build_report_model(m, {});
  REQUIRE(model.sections.size() == 2);
  CHECK(model.sections[0].experiment == "report_demo");
  CHECK(model.sections[1].experiment == "race");
  CHECK(model.sections[1].profile() == "quick");
  const std::string html = render_html(model);
  CHECK(count(html, "<section class=\"experiment\"") == 2);
  CHECK(contains(html, "<a href=\"#x-race\">race</a>"));
  std::string problem;
  const bool balanced = balanced_markup(html, problem);
  INFO(problem);
  CHECK(balanced);
  const std::string md = render_markdown(model);
  CHECK(contains(md, "| experiment | cases | builds | expectations |"));
  CHECK(contains(md, "| race | 3 | 3 | ✓ |"));
  CHECK(contains(md, "| report_demo | 5 | 3 | ✗ 3 cells |"));
  CHECK(contains(md, "profile `quick`"));
}

TEST_CASE("JSON export: the summary cells", "[report][export]") {
  ReportModel model = report_test::demo_model("3.12");
  json j = summary_json(model);
  CHECK(j["format"] == "gilhost-summary");
  REQUIRE(j["experiments"].size() == 1);
  const json& ex = j["experiments"][0];
  CHECK(ex["experiment"] == "report_demo");
  CHECK(ex["cells"].size() == 14);
  CHECK(ex["machines"][0]["cpu_model"] == "AMD EPYC");
  CHECK(ex["builds"][1]["version"] == "3.12.1");
  CHECK(ex["skips"].size() == 2);
  CHECK(ex["expectation_failures"] == 3);
  const Cell* spawn = model.sections[0].summary.cell("spawn", "3.13.0");
  for (const auto& cell : ex["cells"]) {
    if (cell["case"] == "spawn" && cell["interpreter"] == "3.13.0") {
      CHECK(cell["wall_s"]["median"].get<double>() == Approx(spawn->wall_s.median));
      CHECK(cell["peak_processes"] == spawn->peak_processes);
      CHECK(cell["baseline_build"] == "3.12.1");
      CHECK(cell["vs_baseline_python"]["pairs"] == 3);
    }
    if (cell["case"] == "wrong") CHECK(cell["expectations_ok"] == false);
    if (cell["case"] == "fail") CHECK(cell["vs_baseline_python"].is_null());
  }
  CHECK_NOTHROW(json::parse(j.dump()));
}

TEST_CASE("CSV export: one row per run, RFC 4180", "[report][export]") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");

  ReportModel model = report_test::demo_model();
  model.sections[0].runs[1].import_ns = 431250;  // the script's share of prepare, where the runner said it
  const std::string csv = runs_csv(model);
  CHECK(count(csv, "\r\n") == count(csv, "\n"));  // CRLF line ends only (no field here holds a line break)
  auto rows = parse_csv(csv);
  REQUIRE(rows.size() == 1 + 42);
  CHECK(rows[0] == csv_columns());
  const auto col = [&](const std::string& name) {
    auto it = std::find(rows[0].begin(), rows[0].end(), name);
    REQUIRE(it != rows[0].end());
    return static_cast<std::size_t>(it - rows[0].begin());
  };
  // Each run as the file holds it.
  std::vector<json> runs;
  for (const auto& r : model.sections[0].runs) runs.push_back(to_json(r));
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const json& r = runs[i - 1];
    REQUIRE(row.size() == rows[0].size());
    CHECK(row[col("case")] == r["case"]);
    CHECK(row[col("interpreter")] == r["interpreter"]);
    CHECK(row[col("wall_ns")] == std::to_string(r["wall_ns"].get<std::int64_t>()));
    // Empty where the record has none (exec mode, files from before it was recorded), never 0.
    CHECK(row[col("import_ns")] == (r.contains("import_ns") ? std::to_string(r["import_ns"].get<std::int64_t>()) : ""));
    if (i == 2) CHECK(row[col("import_ns")] == "431250");
    CHECK(std::stod(row[col("wall_s")]) == Approx(r["wall_ns"].get<double>() / 1e9));
    CHECK(row[col("peak_tree_rss_bytes")] == std::to_string(r["rss"]["peak_tree_rss_bytes"].get<std::int64_t>()));
    CHECK(row[col("host")] == "vm");
    CHECK(row[col("status")] == r["status"]);
    CHECK(row[col("expect_ok")] == (r["expect_ok"].get<bool>() ? "true" : "false"));
    if (r["case"] == "fail") CHECK(row[col("error_type")] == "KeyError");
    // The result survives as JSON, quotes, commas and all.
    if (r.value("has_result", false)) CHECK(json::parse(row[col("result")]) == r["result"]);
    else CHECK(row[col("result")].empty());
  }
}

TEST_CASE("HTML: thread lanes of each cell's median run, a legend, a rect per segment; stacked shares per case", "[report][html][threads]") {
  const ReportModel model = build_report_model(merge_files({report_test::fixture("report_threads.jsonl")}), {});
  const Section& s = model.sections[0];
  const std::string html = render_html(model);
  std::string problem;
  const bool balanced = balanced_markup(html, problem);
  INFO(problem);
  CHECK(balanced);
  CHECK_FALSE(contains(html, "<script"));

  // 3 cases x 2 builds, every cell with thread states: lanes per cell, folded per case; a shares chart per case.
  CHECK(count(html, "<svg class=\"lanes\"") == 6);
  CHECK(count(html, "<details class=\"lanes\">") == 3);
  // The summary draws the shares again for each kind of reading, other than waiting for a core, with a row
  // for each of its first cells (issue 19).
  std::set<ReadingRule> read_kinds;
  std::size_t read_cells = 0;
  for (const auto& r : s.readings)
    if (r.rule != ReadingRule::waited_for_core) {
      read_kinds.insert(r.rule);
      ++read_cells;
    }
  REQUIRE(read_kinds.size() == 2);
  const std::size_t read_cases = read_kinds.size();  // one chart each
  CHECK(count(html, "<svg class=\"threadshares\"") == 3 + read_cases);
  CHECK(count(html, "<g class=\"shares\"") == 3 * 2 + std::min<std::size_t>(read_cells, 4 * read_kinds.size()));
  CHECK(count(html, "<rect class=\"sharebar\"") > 0);
  // The legend of every chart names each state.
  CHECK(count(html, "<g class=\"legend-item\"") == (6 + 3 + read_cases) * static_cast<std::size_t>(kThreadStateCount));
  for (ThreadState st : kThreadStates) CHECK(contains(html, std::string(">") + thread_state_label(st) + "</text></g>"));
  // One lane per thread and one rect per segment of each cell's median run (its 10 ms segments are wide enough).
  std::size_t lanes = 0, segments = 0;
  for (const auto& c : s.summary.cases)
    for (const auto& i : s.summary.interpreters) {
      const RunRecord* run = median_thread_run(s.summary.cell(c, i)->runs);
      REQUIRE(run);
      for (const auto& t : run->thread_states->threads) {
        ++lanes;
        segments += thread_spans(t).size();
        CHECK(contains(html, fmt::format("<g class=\"lane\" data-tid=\"{}\"", t.tid)));
      }
    }
  CHECK(count(html, "<g class=\"lane\"") == lanes);
  CHECK(count(html, "<rect class=\"seg\"") == segments);
  CHECK(count(html, "<rect class=\"seg\" data-state=\"gil\"") > 0);
  CHECK(contains(html, "thread timelines: the median run of each build"));
}

TEST_CASE("HTML: a lanes caption counts the probes between ticks, where there were any", "[report][html][threads]") {
  const std::string plain = render_html(build_report_model(merge_files({report_test::fixture("report_threads.jsonl")}), {}));
  CHECK_FALSE(contains(plain, "probes of threads in mixed waits"));
  gilhost::MergedResults merged = merge_files({report_test::fixture("report_threads.jsonl")});
  for (auto& line : merged.lines)
    if (auto* run = std::get_if<gilhost::RunRecord>(&line); run && run->thread_states) run->thread_states->probes = 1234;
  const std::string html = render_html(build_report_model(std::move(merged), {}));
  CHECK(count(html, "1,234 probes of threads in mixed waits between") == 6);  // each cell's lanes
}

TEST_CASE("HTML: thread lanes stop at 16 and count the rest", "[report][html][threads]") {
  RunRecord run;
  run.thread_states = ThreadStates{};
  ThreadStates& ts = *run.thread_states;
  ts.threads_not_kept = 3;
  for (int k = 0; k < 20; ++k) {
    ThreadRecord t;
    t.tid = 500 + k;
    t.name = "w" + std::to_string(k);
    t.python = k != 0;  // the first is not Python: it goes after the Python threads, so past the cap
    t.end_ns = 100000000;
    t.timeline = {{0, ThreadState::cpu}, {50000000, ThreadState::gil}};
    ts.threads.push_back(t);
  }
  const std::string svg = thread_lanes_svg(run);
  CHECK(count(svg, "<g class=\"lane\"") == kMaxThreadLanes);
  CHECK(count(svg, "<rect class=\"seg\"") == 2 * kMaxThreadLanes);
  CHECK_FALSE(contains(svg, "data-tid=\"500\""));
  CHECK(contains(svg, ">and 7 more threads</text>"));  // 4 kept past the cap, 3 not kept
  CHECK(contains(svg, ">100 ms</text>"));  // the time axis
}

TEST_CASE("thread lanes: spans too narrow to draw are gathered and drawn in proportion to each state's time", "[report][threads]") {
  using S = ThreadState;
  const std::vector<StateSpan> wide{{0, 10, S::cpu}, {10, 20, S::gil}, {20, 30, S::gil}, {40, 50, S::io}};
  const auto drawn = drawn_spans(wide, 1.0);
  REQUIRE(drawn.size() == 3);  // the two GIL spans joined; the gap before io kept
  CHECK(drawn[1].start_ns == 10);
  CHECK(drawn[1].end_ns == 30);
  CHECK(drawn[2].start_ns == 40);

  // The time each state is drawn for.
  auto drawn_time = [](const std::vector<StateSpan>& spans) {
    std::map<S, std::int64_t> out;
    for (const auto& sp : spans) out[sp.state] += sp.end_ns - sp.start_ns;
    return out;
  };
  // 1000 spans of 1 ns, three in four GIL waits, drawn at 100 ns: ten gatherings of 75 GIL and 25 CPU.
  std::vector<StateSpan> narrow;
  for (std::int64_t k = 0; k < 1000; ++k) narrow.push_back({k, k + 1, k % 4 == 0 ? S::cpu : S::gil});
  const auto merged = drawn_spans(narrow, 100.0);
  CHECK(drawn_time(merged) == std::map<S, std::int64_t>{{S::cpu, 250}, {S::gil, 750}});
  CHECK(merged.size() <= 11);  // each gathering's first part joins the one before it
  CHECK(merged.front().start_ns == 0);
  CHECK(merged.back().end_ns == 1000);
  for (std::size_t k = 1; k < merged.size(); ++k) {
    CHECK(merged[k].start_ns == merged[k - 1].end_ns);  // no gap, no overlap
    CHECK(merged[k].state != merged[k - 1].state);      // neighbours of one state joined
  }

  // A long run whose thread changes state every sample (half on CPU, half waiting for the GIL): its lane's
  // rects stay bounded by the lane's width, and still show half and half.
  RunRecord run;
  run.thread_states = ThreadStates{};
  ThreadRecord busy;
  busy.tid = 7;
  busy.end_ns = 2000 * 5000000LL;
  for (std::int64_t k = 0; k < 2000; ++k) busy.timeline.push_back({k * 5000000, k % 2 ? S::gil : S::cpu});
  run.thread_states->threads = {busy};
  const std::string svg = thread_lanes_svg(run);
  const std::size_t rects = count(svg, "<rect class=\"seg\"");
  CHECK(rects > 100);
  CHECK(rects <= 2 * 700 / static_cast<std::size_t>(kMinSpanPx));
  const std::size_t gil_rects = count(svg, "<rect class=\"seg\" data-state=\"gil\"");
  CHECK(gil_rects + 1 >= rects / 2);  // they alternate
  CHECK(gil_rects <= rects / 2 + 1);
}
