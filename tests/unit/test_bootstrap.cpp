// runner/bootstrap: JSON values as Python literals, checked against a real python3 when there is one; the
// runner spec's trip through JSON text.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "helpers.hpp"
#include "runner/bootstrap.hpp"
#include "runner/runspec.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

using gilhost::to_python_literal;
using nlohmann::json;

TEST_CASE("to_python_literal: constants, numbers and containers", "[bootstrap]") {
  CHECK(to_python_literal(json(nullptr)) == "None");
  CHECK(to_python_literal(json(true)) == "True");
  CHECK(to_python_literal(json(false)) == "False");
  CHECK(to_python_literal(json(0)) == "0");
  CHECK(to_python_literal(json(-17)) == "-17");
  CHECK(to_python_literal(json(18446744073709551615ULL)) == "18446744073709551615");
  CHECK(to_python_literal(json(2.5)) == "2.5");
  CHECK(to_python_literal(json(1.0)) == "1.0");
  CHECK(to_python_literal(json::array()) == "[]");
  CHECK(to_python_literal(json::object()) == "{}");
  CHECK(to_python_literal(json::array({1, nullptr, true})) == "[1, None, True]");
  CHECK(to_python_literal(json{{"a", {{"b", nullptr}}}, {"c", json::array({false})}}) ==
        "{\"a\": {\"b\": None}, \"c\": [False]}");
  CHECK(to_python_literal(json(std::nan(""))) == "float('nan')");
  CHECK(to_python_literal(json(std::numeric_limits<double>::infinity())) == "float('inf')");
  CHECK(to_python_literal(json(-std::numeric_limits<double>::infinity())) == "-float('inf')");
}

TEST_CASE("to_python_literal: strings are escaped, in ASCII", "[bootstrap]") {
  CHECK(to_python_literal(json("plain")) == "\"plain\"");
  CHECK(to_python_literal(json("say \"hi\"\\n")) == "\"say \\\"hi\\\"\\\\n\"");
  CHECK(to_python_literal(json("tab\there\nline")) == "\"tab\\there\\nline\"");
  CHECK(to_python_literal(json("héllo")) == "\"h\\u00e9llo\"");
  // Outside the BMP: one \U escape (Python does not join \u surrogate pairs into one character).
  CHECK(to_python_literal(json("😀")) == "\"\\U0001f600\"");
  const std::string lit = to_python_literal(json("日本 😀 \x01 ☃"));
  for (unsigned char c : lit) {
    INFO("literal: " << lit);
    REQUIRE(c < 0x80);
    REQUIRE(c >= 0x20);
  }
}

namespace {

using gilhost_test::real_python3;

}  // namespace

TEST_CASE("to_python_literal: python3 evaluates the literal back to the same value", "[bootstrap][python]") {
  const std::string python = real_python3();
  if (python.empty()) {
    WARN("no python3 on PATH: skipping the round trip through Python");
    return;
  }
  const std::vector<json> values = {
      nullptr,
      true,
      false,
      0,
      -123456789012345LL,
      9007199254740993LL,
      0.1,
      -2.5e-300,
      1e300,
      "",
      "quote \" backslash \\ slash / tab \t newline \n return \r nul-ish \x01 del \x7f",
      "héllo wörld — 日本語 ☃ \u2028 line sep",
      "emoji 😀 and 𝄞 outside the BMP",
      "{name} 'single' '''triple''' \"\"\"",
      json::array({1, "two", json::array({3.5, nullptr}), json::object()}),
      json{{"key with spaces", {{"nested", json::array({true, false})}}}, {"ü", "ß"}, {"", 0}},
  };
  for (const auto& value : values) {
    const std::string literal = to_python_literal(value);
    INFO("value: " << value.dump() << "\nliteral: " << literal);
    // Written as UTF-8 bytes: a str holding lone surrogates cannot be encoded and fails the run.
    const std::string program = "import json, sys\nv = " + literal +
                                "\nsys.stdout.buffer.write(json.dumps(v, ensure_ascii=False).encode('utf-8'))\n";
    gilhost::Captured c = gilhost::run_capture({python, "-I", "-c", program}, 30);
    INFO("stderr: " << c.err);
    REQUIRE(c.exit_code == 0);
    json back = json::parse(c.out, nullptr, false);
    REQUIRE_FALSE(back.is_discarded());
    CHECK(back == value);
  }

  // Special floats: Python's own test, since JSON cannot say them.
  for (const auto& [value, test] : std::vector<std::pair<double, std::string>>{
           {std::nan(""), "v != v"},
           {std::numeric_limits<double>::infinity(), "v == float('inf')"},
           {-std::numeric_limits<double>::infinity(), "v == -float('inf')"}}) {
    const std::string literal = to_python_literal(json(value));
    INFO("literal: " << literal);
    gilhost::Captured c = gilhost::run_capture({python, "-I", "-c", "v = " + literal + "\nassert " + test}, 30);
    INFO("stderr: " << c.err);
    CHECK(c.exit_code == 0);
  }
}

TEST_CASE("bootstrap_program: _spec first, and the whole program compiles", "[bootstrap][python]") {
  const json spec = {{"script", "/tmp/x.py"}, {"mode", "call"}, {"function", "run"}, {"kwargs", {{"n", 3}}}};
  const std::string program = gilhost::bootstrap_program(spec);
  CHECK(program.rfind("_spec = " + to_python_literal(spec) + "\n", 0) == 0);
  CHECK(program.find(gilhost::bootstrap_source()) != std::string::npos);

  const std::string python = real_python3();
  if (python.empty()) {
    WARN("no python3 on PATH: not compiling the bootstrap");
    return;
  }
  gilhost_test::TempDir tmp;
  gilhost_test::write_file(tmp / "program.py", program);
  gilhost::Captured c = gilhost::run_capture(
      {python, "-I", "-c", "import sys; compile(open(sys.argv[1], encoding='utf-8').read(), 'bootstrap', 'exec')",
       (tmp / "program.py").string()},
      30);
  INFO("stderr: " << c.err);
  CHECK(c.exit_code == 0);
}

TEST_CASE("bootstrap_parts: the cold part holds the encoder and the error recorders, at their own lines", "[bootstrap]") {
  const gilhost::BootstrapParts parts = gilhost::bootstrap_parts();
  const std::string& whole = gilhost::bootstrap_source();
  REQUIRE_FALSE(parts.cold.empty());
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  // The cold part's code keeps the whole source's line numbers; the hot part is the source's beginning.
  CHECK(whole.rfind(parts.hot, 0) == 0);
  CHECK(lines(parts.cold) == lines(whole));
  CHECK(parts.cold.find_first_not_of('\n') == static_cast<std::size_t>(lines(parts.hot)));
  CHECK(parts.cold.compare(static_cast<std::size_t>(lines(parts.hot)), 16, "# gilhost: cold\n") == 0);
  for (const char* cold : {"class UnrecordableValue(", "def _json(", "def _recorded(", "def _record_error("}) {
    INFO(cold);
    CHECK(parts.hot.find(cold) == std::string::npos);
    CHECK(parts.cold.find(cold) != std::string::npos);
  }
  for (const char* hot : {"def _plain(", "def _cold(", "def _prepare(", "def _finish(", "def _json_str("}) {
    INFO(hot);
    CHECK(parts.hot.find(hot) != std::string::npos);
  }
}

TEST_CASE("bootstrap: _plain writes what _json writes, and leaves the rest to it", "[bootstrap][python]") {
  const std::string python = real_python3();
  if (python.empty()) {
    WARN("no python3 on PATH: not running the bootstrap");
    return;
  }
  const std::string check = R"PY(
class S(str): pass
class I(int): pass
deep = []
for _ in range(70):
    deep = [deep]
values = [None, True, False, 0, -1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 1.5, -0.0, 1e300, float("nan"),
          float("inf"), "", "plain", 'q"uote', "back\\slash", "tab\t", "\x7f", "\u00e9", "\ud800", [], (), {},
          [1, [2, [3]]], (1, "a"), {"a": 1, "b": [None]}, {1: "x"}, {"a": {1: 2}}, S("s"), I(3), {S("k"): 1},
          [S("x")], deep]
for v in values:
    p = _plain(v)
    try:
        j = _cold("_json")(v)
    except _cold("UnrecordableValue"):
        j = None
    assert p is None or p == j, (v, p, j)
# What a run hands over most often is written without the cold part.
for v in [None, True, 3, 1.5, "plain", "\u00e9", [1, "a"], {"a": [1.5, None]}, (1, 2), {}]:
    assert _plain(v) is not None, v
for v in [float("nan"), 2**64, {1: 2}, S("s"), I(3), deep]:
    assert _plain(v) is None, v
print("checked", len(values))
)PY";
  gilhost_test::TempDir tmp;
  gilhost_test::write_file(tmp / "program.py", gilhost::spec_statement(json::object()) + gilhost::bootstrap_source() + check);
  gilhost::Captured c = gilhost::run_capture({python, "-I", (tmp / "program.py").string()}, 30);
  INFO("stderr: " << c.err);
  CHECK(c.exit_code == 0);
  CHECK(c.out.find("checked 35") != std::string::npos);
}

TEST_CASE("RunnerSpec: kwargs keep NaN and infinities through the command line's JSON text", "[bootstrap]") {
  gilhost::RunnerSpec spec;
  spec.executable = "/usr/bin/python3";
  spec.script = "/tmp/s.py";
  spec.kwargs = {{"nan", std::nan("")},
                 {"inf", HUGE_VAL},
                 {"list", json::array({-HUGE_VAL, 1.5, "x"})},
                 // the case's own tables that look like tags stay tables
                 {"table", {{"$float", "nan"}}},
                 {"dollars", {{"$$x", 1}, {"$", 2}}}};
  const std::string text = spec.to_json().dump();
  CHECK(text.find("null") == std::string::npos);
  const gilhost::RunnerSpec back = gilhost::RunnerSpec::from_text(text);
  CHECK(std::isnan(back.kwargs["nan"].get<double>()));
  CHECK(back.kwargs["inf"].get<double>() == HUGE_VAL);
  CHECK(back.kwargs["list"][0].get<double>() == -HUGE_VAL);
  CHECK(back.kwargs["list"][1] == 1.5);
  CHECK(back.kwargs["list"][2] == "x");
  CHECK(back.kwargs["table"] == json({{"$float", "nan"}}));
  CHECK(back.kwargs["dollars"] == json({{"$$x", 1}, {"$", 2}}));
}

TEST_CASE("RunnerSpec: the GIL offsets handed over come back as they went, and only when there are some",
          "[bootstrap][gil_offset_cache]") {
  gilhost::RunnerSpec spec;
  spec.executable = "/usr/bin/python3";
  spec.script = "/tmp/s.py";
  CHECK_FALSE(spec.to_json().contains("gil_offsets"));
  CHECK(gilhost::RunnerSpec::from_text(spec.to_json().dump()).gil_offsets.empty());
  gilhost::HandedGilOffset old_build, on, off;  // before 3.13 (no GIL state said), and 3.14t both ways
  old_build.offset.word_offset = 0x5d1a48;
  old_build.offset.holder_delta = -64;
  old_build.offset.object = "/opt/my py/lib/libpython3.12.so.1.0";
  on = old_build;
  on.gil_on = true;
  on.offset.holder_delta = UINT32_MAX + std::int64_t{8};
  off.gil_on = false;
  off.offset.has_gil = false;
  spec.gil_offsets = {old_build, on, off};
  CHECK(gilhost::RunnerSpec::from_text(spec.to_json().dump()).gil_offsets == spec.gil_offsets);
  const std::string both = R"({"executable": "/p", "script": "/s", )";
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(gilhost::RunnerSpec::from_text(both + R"("gil_offsets": "x"})"), Contains("'gil_offsets' is not a list"));
  CHECK_THROWS_WITH(gilhost::RunnerSpec::from_text(both + R"("gil_offsets": [1]})"), Contains("not a list of objects"));
  CHECK_THROWS_WITH(gilhost::RunnerSpec::from_text(both + R"("gil_offsets": [{"word": -1}]})"), Contains("'word' is not a count"));
  CHECK_THROWS_WITH(gilhost::RunnerSpec::from_text(both + R"("gil_offsets": [{"holder": 1.5}]})"),
                    Contains("'holder' is not a 64-bit integer"));
}

TEST_CASE("RunnerSpec::from_text says what is wrong with a spec", "[bootstrap]") {
  using gilhost::RunnerSpec;
  using Catch::Contains;
  CHECK_THROWS_WITH(RunnerSpec::from_text("{"), Contains("the text ends inside an object at byte 1"));
  CHECK_THROWS_WITH(RunnerSpec::from_text("[]"), Contains("not a JSON object"));
  CHECK_THROWS_WITH(RunnerSpec::from_text(R"({"executable": "/p"})"), Contains("no 'executable' or no 'script'"));
  const std::string both = R"({"executable": "/p", "script": "/s.py", )";
  CHECK_THROWS_WITH(RunnerSpec::from_text(both + R"("mode": 5})"), Contains("'mode' is not a string"));
  CHECK_THROWS_WITH(RunnerSpec::from_text(both + R"("subinterpreters": -1})"), Contains("'subinterpreters' is not a count"));
  CHECK_THROWS_WITH(RunnerSpec::from_text(both + R"("argv": ["a", 1]})"), Contains("'argv' is not a list of strings"));
  CHECK_THROWS_WITH(RunnerSpec::from_text(both + R"("locate_gil": 1})"), Contains("'locate_gil' is not true or false"));
  CHECK_THROWS_WITH(RunnerSpec::from_text(both + R"("kwargs": []})"), Contains("'kwargs' is not an object"));
  const RunnerSpec s = RunnerSpec::from_text(both + R"("subinterpreters": 3, "locate_gil": false})");
  CHECK(s.subinterpreters == 3);
  CHECK_FALSE(s.locate_gil);
  CHECK(s.mode == "call");  // absent: the default
  CHECK(s.gil == "own");
}
