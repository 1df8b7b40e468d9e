// Issue 19, points 3 and 9: the checker's answer, "did you mean", plain ASCII, picking a session.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "cli/did_you_mean.hpp"
#include "cli/plain_text.hpp"
#include "cli/python_check.hpp"
#include "report/sessions.hpp"

using namespace gilhost;

TEST_CASE("the checker's answer: a file that parses, with the names it lacks", "[answer-check]") {
  const CheckerAnswer a = parse_checker_answer(
      R"({"file": "/x/w.py", "error": "", "syntax": null, "functions": ["a", "b"], "missing": ["nope"]})");
  CHECK(a.file == "/x/w.py");
  CHECK(a.error.empty());
  CHECK_FALSE(a.syntax);
  CHECK(a.functions == std::vector<std::string>{"a", "b"});
  CHECK(a.missing == std::vector<std::string>{"nope"});
}

TEST_CASE("the checker's answer: a syntax error with its line, column and message", "[answer-check]") {
  const CheckerAnswer a = parse_checker_answer(
      R"({"file": "w.py", "error": "", "syntax": {"line": 3, "column": 7, "message": "invalid syntax"}, "functions": [], "missing": []})");
  REQUIRE(a.syntax);
  CHECK(a.syntax->line == 3);
  CHECK(a.syntax->column == 7);
  CHECK(a.syntax->message == "invalid syntax");
}

TEST_CASE("the checker's answer: a module not found is an error, not a syntax error", "[answer-check]") {
  const CheckerAnswer a =
      parse_checker_answer(R"({"file": "nomod", "error": "no module named 'nomod'", "syntax": null, "missing": []})");
  CHECK(a.error == "no module named 'nomod'");
  CHECK(a.functions.empty());
}

TEST_CASE("what is no checker's answer is refused", "[answer-check]") {
  CHECK_THROWS_AS(parse_checker_answer("Traceback (most recent call last):"), std::runtime_error);
  CHECK_THROWS_AS(parse_checker_answer("[1, 2]"), std::runtime_error);
  CHECK_THROWS_AS(parse_checker_answer(R"({"file": 3, "missing": []})"), std::runtime_error);
  CHECK_THROWS_AS(parse_checker_answer(R"({"file": "w.py", "missing": [], "syntax": {"line": "x"}})"), std::runtime_error);
}

TEST_CASE("did you mean: the nearest command or option, only when near", "[answer-check]") {
  const std::vector<std::string> commands{"run", "check", "pythons", "report", "export", "compare", "merge", "build"};
  CHECK(nearest_word("rnu", commands) == "run");
  CHECK(nearest_word("chekc", commands) == "check");
  CHECK(nearest_word("reprot", commands) == "report");
  CHECK(nearest_word("xyzzy", commands).empty());
  CHECK(nearest_word("", commands).empty());
  CHECK(nearest_word("--quik", {"--quick", "--repeat", "-q"}) == "--quick");
}

TEST_CASE("plain ASCII: each symbol gilhost prints has its stand-in", "[answer-check]") {
  CHECK(to_ascii("✓ ok ✗ · ±3.2% — 2× … 5 µs ─┼─ │") == "ok ok FAIL - +-3.2% - 2x ... 5 us --- |");
  CHECK(to_ascii("plain") == "plain");
  CHECK(to_ascii("\xff") == "?");
  CHECK(to_ascii("ab\xe2\x9c") == "ab??");  // a cut sequence
}

namespace {

MetaRecord meta(const std::string& name, std::int64_t started) {
  MetaRecord m;
  m.experiment.name = name;
  m.started_unix_ns = started;
  return m;
}

RunRecord run_of(const std::string& case_name) {
  RunRecord r;
  r.case_name = case_name;
  return r;
}

}  // namespace

TEST_CASE("--session keeps one session of a file that holds several", "[answer-check]") {
  MergedResults m;
  m.lines = {meta("first", 1'000'000'000'000'000'000), run_of("a"), run_of("b"), meta("second", 1'000'000'100'000'000'000),
             run_of("c")};
  const auto sessions = list_sessions(m);
  REQUIRE(sessions.size() == 2);
  CHECK(sessions[1].experiment == "second");
  CHECK(several_sessions_note(sessions).find("2 sessions") != std::string::npos);
  const MergedResults last = keep_session(m, -1);
  REQUIRE(last.lines.size() == 2);
  CHECK(std::get<RunRecord>(last.lines[1]).case_name == "c");
  const MergedResults first = keep_session(m, 1);
  REQUIRE(first.lines.size() == 3);
  CHECK(std::get<MetaRecord>(first.lines[0]).experiment.name == "first");
  CHECK(keep_session(m, 0).lines.size() == 5);
  CHECK_THROWS_AS(keep_session(m, 3), std::invalid_argument);
  CHECK_THROWS_AS(keep_session(m, -3), std::invalid_argument);
}
