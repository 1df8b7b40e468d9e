// [case.extract]: the loader's checks (located errors), number parsing, and what a run's stdout yields —
// metrics, or notes that say why not (no match, not a number, cut from the kept output, the script's own).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/adhoc.hpp"
#include "config/loader.hpp"
#include "helpers.hpp"
#include "results/extract_metrics.hpp"
#include "util/strings.hpp"
#include "results/record_json.hpp"

using gilhost::ConfigError;
using gilhost::ConfigErrors;
using gilhost::Experiment;
using gilhost::ExtractSpec;
using gilhost::LoadOptions;
using gilhost::load_experiment_text;
using gilhost::parse_printed_number;
using gilhost_test::TempDir;
using gilhost_test::write_file;
using nlohmann::json;

namespace {

struct Sandbox {
  TempDir dir;
  std::string toml_path;
  Sandbox() : toml_path((dir / "exp.toml").string()) { write_file(dir / "bench.py", "print('pyfunction  1.5x slower')\n"); }
  Experiment load(const std::string& text, const LoadOptions& options = {}) const {
    return load_experiment_text(text, toml_path, options);
  }
  std::vector<ConfigError> errors(const std::string& text, const LoadOptions& options = {}) const {
    try {
      load_experiment_text(text, toml_path, options);
    } catch (const ConfigErrors& e) {
      for (const auto& err : e.errors()) UNSCOPED_INFO(err.str());
      return e.errors();
    }
    FAIL("the file loaded without errors");
    return {};
  }
};

const std::string kHead = "[experiment]\nscript = \"bench.py\"\n";

ExtractSpec spec(const std::string& name, const std::string& pattern) {
  std::string problem;
  auto re = gilhost::compile_extract_regex(pattern, problem);
  INFO(problem);
  REQUIRE(re);
  return {name, pattern, re, {}};
}

}  // namespace

TEST_CASE("extract: entries load per case, experiment-wide ones under them, --extract over both", "[extract][config]") {
  Sandbox sb;
  const std::string toml = kHead +
                           "[experiment.extract]\n"
                           "speed = '^speed (\\d+)'\n"
                           "cost = 'cost: (\\d+)'\n"
                           "[[case]]\nname = \"a\"\nmain = true\n"
                           "[case.extract]\n"
                           "pyfunction = '^pyfunction\\s+([0-9.]+)x (?:faster|slower)'\n"
                           "cost = 'total cost (\\d+)'\n"
                           "[[case]]\nname = \"b\"\nmain = true\n";
  const Experiment ex = sb.load(toml);
  const auto& a = ex.find_case("a")->extract;
  REQUIRE(a.size() == 3);
  CHECK(a[0].name == "speed");
  CHECK(a[1].name == "cost");
  CHECK(a[1].pattern == "total cost (\\d+)");  // the case's entry replaces the experiment's, in its place
  CHECK(a[2].name == "pyfunction");
  CHECK(a[2].where.line == 10);
  CHECK(ex.find_case("b")->extract.size() == 2);

  // Recorded with each case in the results file's experiment.
  const json doc = ex.to_json();
  CHECK(doc["cases"][0]["extract"]["pyfunction"] == "^pyfunction\\s+([0-9.]+)x (?:faster|slower)");
  CHECK(doc["cases"][1]["extract"]["cost"] == "cost: (\\d+)");

  LoadOptions options;
  options.extracts = {"cost=spent (\\d+)", "new = n=(\\d+)"};
  const Experiment over = sb.load(toml, options);
  const auto& b = over.find_case("b")->extract;
  REQUIRE(b.size() == 3);
  CHECK(b[1].pattern == "spent (\\d+)");
  CHECK(b[2].name == "new");
  CHECK(b[2].pattern == " n=(\\d+)");  // the regex as given, after the first '='
  CHECK(over.to_json()["extract_options"].size() == 2);
}

TEST_CASE("extract: bad entries are errors at their file:line:column", "[extract][config]") {
  Sandbox sb;
  const auto errors = sb.errors(kHead +
                                "[[case]]\nname = \"a\"\nmain = true\n"
                                "[case.extract]\n"
                                "none = 'speed \\d+'\n"          // line 7: no group
                                "two = '(\\d+) of (\\d+)'\n"      // line 8: two groups
                                "bad = 'speed ([0-9'\n"           // line 9: not a regex
                                "number = 5\n");                  // line 10: not a string
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].where.line == 7);
  CHECK(errors[0].where.column == 8);
  CHECK(errors[0].message.find("case.extract.none") != std::string::npos);
  CHECK(errors[0].message.find("has no capture group: put ( ) around the number") != std::string::npos);
  CHECK(errors[1].where.line == 8);
  CHECK(errors[1].message.find("2 capture groups") != std::string::npos);
  CHECK(errors[1].message.find("(?:...)") != std::string::npos);
  CHECK(errors[2].where.line == 9);
  CHECK(errors[2].message.find("is not a regex") != std::string::npos);
  CHECK(errors[3].where.line == 10);
  CHECK(errors[3].message.find("must be a string") != std::string::npos);
  CHECK(errors[0].str().rfind(sb.toml_path + ":7:8: error:", 0) == 0);

  const auto in_experiment = sb.errors(kHead + "extract = 'x'\n[[case]]\nname = \"a\"\nmain = true\n");
  CHECK(in_experiment[0].message.find("'extract' must be a table") != std::string::npos);

  // A hostile file (the fuzzer's kind): RE2 parses deep nesting without recursion; the message stays short.
  const auto nested = sb.errors(kHead + "[[case]]\nname = \"a\"\nmain = true\n[case.extract]\ndeep = '" +
                                std::string(5000, '(') + "x" + std::string(5000, ')') + "'\n");
  CHECK(nested[0].message.find("has 5000 capture groups") != std::string::npos);
  CHECK(nested[0].message.size() < 300);

  LoadOptions options;
  options.extracts = {"noname", "x=(a)(b)"};
  const auto cli = sb.errors(kHead + "[[case]]\nname = \"a\"\nmain = true\n", options);
  REQUIRE(cli.size() == 2);
  CHECK(cli[0].str().rfind("--extract noname: error: --extract takes NAME=REGEX", 0) == 0);
  CHECK(cli[1].str().find("--extract x=(a)(b): error:") == 0);
  CHECK(cli[1].message.find("2 capture groups") != std::string::npos);
}

TEST_CASE("extract: --extract on a script run as __main__", "[extract][config]") {
  TempDir dir;
  write_file(dir / "bench.py", "print('speed 12')\n");
  LoadOptions options;
  options.extracts = {"speed=^speed (\\d+)"};
  const Experiment ex = gilhost::load_script_experiment((dir / "bench.py").string(), {}, options);
  REQUIRE(ex.cases.size() == 1);
  REQUIRE(ex.cases[0].extract.size() == 1);
  CHECK(ex.cases[0].extract[0].name == "speed");
}

TEST_CASE("extract: numbers as scripts print them", "[extract]") {
  CHECK(*parse_printed_number("12") == json(12));
  CHECK(parse_printed_number("12")->is_number_integer());
  CHECK(*parse_printed_number("-2") == json(-2));
  CHECK(*parse_printed_number("+7") == json(7));
  CHECK(*parse_printed_number(" 1.5 ") == json(1.5));
  CHECK(parse_printed_number("1.5")->is_number_float());
  CHECK(*parse_printed_number(".5") == json(0.5));
  CHECK(*parse_printed_number("2.") == json(2.0));
  CHECK(*parse_printed_number("1e3") == json(1000.0));
  CHECK(*parse_printed_number("2.5E-3") == json(0.0025));
  CHECK(*parse_printed_number("1,234,567") == json(1234567));
  CHECK(*parse_printed_number("1,234.5") == json(1234.5));
  CHECK(parse_printed_number("99999999999999999999")->is_number_float());  // beyond 64 bits
  for (const char* bad : {"", " ", "-", ".", "1.5x", "x1", "1,5", "12,34", ",123", "1e", "1e+", "inf", "nan", "0x10",
                          "1.2.3", "1e999", "--1"}) {
    INFO(bad);
    CHECK_FALSE(parse_printed_number(bad));
  }
}

TEST_CASE("extract: the first matching line of stdout gives each metric", "[extract]") {
  const std::string out =
      "Running benchmarks with 2 threads\n"
      "object_cfunction            1.2x slower\n"
      "pyfunction                  1.9x faster\r\n"
      "\x1b[31mgenerator                   3.0x slower\x1b[0m\n"
      "pyfunction                  9.9x faster\n"
      "total: 1,024 calls\n";
  const auto e = gilhost::extract_metrics({spec("pyfunction", "^pyfunction\\s+([0-9.]+)x (?:faster|slower)$"),
                                           spec("generator", "^generator\\s+([0-9.]+)x"),
                                           spec("threads", "with (\\d+) threads"), spec("calls", "total: ([0-9,]+) calls")},
                                          out, static_cast<std::int64_t>(out.size()));
  INFO(e.metrics.dump());
  CHECK(e.notes.empty());
  CHECK(e.metrics["pyfunction"] == json(1.9));  // the first line; the \r of a CRLF line is not part of it
  CHECK(e.metrics["generator"] == json(3.0));   // terminal colours do not get in the way
  CHECK(e.metrics["threads"] == json(2));
  CHECK(e.metrics["calls"] == json(1024));
}

TEST_CASE("extract: no match, no number, output cut: notes, and the run keeps its status", "[extract]") {
  const std::string out = "speed: fast\nhello\n";
  const auto e = gilhost::extract_metrics({spec("missing", "^nothing (\\d+)"), spec("speed", "^speed: (\\w+)"),
                                           spec("optional", "^hello(\\d+)?")},
                                          out, static_cast<std::int64_t>(out.size()));
  CHECK(e.metrics.empty());
  REQUIRE(e.notes.size() == 3);
  CHECK(e.notes[0] == "extract: no line of stdout matches missing = '^nothing (\\d+)'");
  CHECK(e.notes[1] == "extract: speed = '^speed: (\\w+)' matched line 1 of stdout, but its group holds 'fast', not a number");
  CHECK(e.notes[2].find("took no part in the match") != std::string::npos);

  const auto empty = gilhost::extract_metrics({spec("x", "(\\d+)")}, "", 0);
  REQUIRE(empty.notes.size() == 1);
  CHECK(empty.notes[0].find("printed nothing to stdout") != std::string::npos);

  // A long output keeps its head and tail: a line that is not in them may have been in the middle, and the
  // capture's own marker is not the script's output.
  const std::string kept = "start\n[... 5000 bytes not kept ...]\nend 7\n";
  const auto cut = gilhost::extract_metrics({spec("middle", "^middle (\\d+)"), spec("dropped", "(\\d+) bytes not kept"),
                                             spec("end", "^end (\\d+)")},
                                            kept, 5000 + 12);
  CHECK(cut.metrics == json{{"end", 7}});
  REQUIRE(cut.notes.size() == 2);
  CHECK(cut.notes[0].find("stdout was 5012 bytes, and only its beginning and end were kept") != std::string::npos);
}

TEST_CASE("extract: into a run record, beside the script's own metrics, and through the results file", "[extract]") {
  gilhost::RunRecord r;
  r.stdout_text = "speed 12\ncost 3.5\n";
  r.stdout_bytes = static_cast<std::int64_t>(r.stdout_text.size());
  r.metrics = {{"speed", 99}};  // the script's gilhost.metric("speed", 99)
  r.note = "an earlier note";
  gilhost::apply_extracts({spec("speed", "^speed (\\d+)"), spec("cost", "^cost ([0-9.]+)"), spec("gone", "^gone (\\d+)")}, r);
  CHECK(r.metrics == json{{"speed", 99}, {"cost", 3.5}});
  CHECK(r.is_ok());
  CHECK(r.note.rfind("an earlier note; ", 0) == 0);
  CHECK(r.note.find("extract: no line of stdout matches gone") != std::string::npos);
  CHECK(r.note.find("speed not taken from stdout: the script reported metric 'speed' itself") != std::string::npos);

  const gilhost::RunRecord back = gilhost::run_from_json(gilhost::to_json(r));
  CHECK(back.metrics == r.metrics);
}

#include "report/compare.hpp"
#include "report/metrics.hpp"

namespace {

gilhost::RunRecord metric_run(const std::string& build, int repeat, json metrics, gilhost::RunStatus status = gilhost::RunStatus::ok) {
  gilhost::RunRecord r;
  r.experiment = "ft";
  r.case_name = r.base_case = "scaling";
  r.interpreter = build;
  r.repeat = repeat;
  r.status = status;
  r.wall_ns = 1000000 * (repeat + 1);
  r.metrics = std::move(metrics);
  return r;
}

}  // namespace

TEST_CASE("extract: metrics tabulated per case and build, and compared side by side", "[extract][report]") {
  using gilhost::RunStatus;
  const std::vector<gilhost::RunRecord> runs{
      metric_run("3.14t", 0, {{"pyfunction", 1.5}, {"threads", 2}}), metric_run("3.14t", 1, {{"pyfunction", 2.5}, {"threads", 2}}),
      metric_run("3.14t", 2, {{"pyfunction", 900}}, RunStatus::error),  // not an ok run: not counted
      metric_run("3.13t", 0, {{"threads", 2}, {"label", "text"}})};
  gilhost::ExperimentInfo ex;
  ex.cases.push_back({"scaling", "", "scaling", {}, {{"absent", "^absent (\\d+)"}, {"pyfunction", "^pyfunction ([0-9.]+)"}}});
  const gilhost::Summary sum = gilhost::summarize(runs, {}, "");
  const gilhost::Table t = gilhost::build_metrics_table(sum, ex);
  REQUIRE(t.columns.size() == 4);
  CHECK(t.columns[2].title == "3.14t");
  // The extract's names first (one that never matched shows "-"), then what the runs report besides.
  REQUIRE(t.rows.size() == 4);
  CHECK(t.rows[0] == std::vector<std::string>{"scaling", "absent", "-", "-"});
  CHECK(t.rows[1] == std::vector<std::string>{"scaling", "pyfunction", "2 ±25.0%", "-"});
  CHECK(t.rows[2] == std::vector<std::string>{"scaling", "threads", "2 ±0.0%", "2"});
  CHECK(t.rows[3] == std::vector<std::string>{"scaling", "label", "-", "-"});  // not a number
  CHECK(gilhost::extract_sources(ex) == std::vector<std::string>{"absent: the first line of stdout matching '^absent (\\d+)'",
                                                                 "pyfunction: the first line of stdout matching '^pyfunction ([0-9.]+)'"});

  std::vector<gilhost::ResultsLine> a, b;
  for (int i = 0; i < 4; ++i) {
    a.emplace_back(metric_run("3.14t", i, {{"pyfunction", 1.0 + 0.01 * i}}));
    b.emplace_back(metric_run("3.14t", i, {{"pyfunction", 2.0 + 0.01 * i}}));
  }
  const gilhost::Comparison c = gilhost::compare_runs(a, b, {});
  REQUIRE(c.metric_rows.size() == 1);
  const auto& m = c.metric_rows[0];
  CHECK(m.metric == "pyfunction");
  CHECK(m.a.n == 4);
  CHECK(m.ratio == Approx(2.015 / 1.015));
  CHECK(m.test.p_value < 0.05);
  CHECK(c.changed() == 0);  // metrics get no verdict: the wall times did not change
  const std::string text = gilhost::render_comparison_text(c);
  CHECK(text.find("pyfunction") != std::string::npos);
  CHECK(text.find("1.985x") != std::string::npos);
  CHECK(gilhost::render_comparison_markdown(c).find("| ft | scaling | 3.14t | pyfunction |") != std::string::npos);
}

TEST_CASE("extract: a long line, whole, with a pattern a backtracking engine would choke on", "[extract]") {
  // RE2 matches in linear time with a bounded stack: a 1 MiB line (the kept head of stdout) is just text.
  const std::string line = std::string(std::size_t(1) << 20, 'a') + " 5\n";
  const auto e = gilhost::extract_metrics({spec("x", "^(?:a|aa)*\\s+(\\d+)$")}, line, static_cast<std::int64_t>(line.size()));
  CHECK(e.metrics == json{{"x", 5}});
  CHECK(e.notes.empty());
  const std::string no_match = std::string(std::size_t(1) << 20, 'a') + "!\n";
  const auto none = gilhost::extract_metrics({spec("x", "^(a*)*$")}, no_match, static_cast<std::int64_t>(no_match.size()));
  CHECK(none.metrics.empty());
  REQUIRE(none.notes.size() == 1);
  CHECK(none.notes[0].find("no line of stdout matches") != std::string::npos);
}

TEST_CASE("shortened: cut at a character boundary, marked", "[extract]") {
  CHECK(gilhost::shortened("abc", 3) == "abc");
  CHECK(gilhost::shortened("abcd", 3) == "abc…");
  CHECK(gilhost::shortened("aé", 2) == "a…");  // é is 2 bytes: not cut in half
  CHECK(gilhost::shortened("aéb", 3) == "aé…");
}
