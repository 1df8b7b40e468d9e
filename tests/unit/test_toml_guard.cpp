// config/toml_guard: what toml++ 3.3.0 is never shown (its TOML_UNREACHABLE on non-ASCII whitespace
// checks), and what the loader makes of such files.
#include <catch2/catch.hpp>

#include <string>

#include "config/loader.hpp"
#include "config/toml_guard.hpp"
#include "helpers.hpp"

using gilhost::ConfigErrors;
using gilhost::guard_toml;

namespace {
// Loads `text` as an experiment file in a folder holding s.py; returns the error text ("" when it loads).
std::string load_error(const std::string& text, std::string* description = nullptr) {
  gilhost_test::TempDir dir;
  gilhost_test::write_file(dir / "s.py", "def f(**_):\n    return 1\n");
  const std::string path = (dir / "x.toml").string();
  try {
    auto ex = gilhost::load_experiment_text(text, path);
    if (description) *description = ex.description;
    return "";
  } catch (const ConfigErrors& e) {
    std::string out = e.errors().front().str();
    return out.substr(out.find("x.toml:") + 7);  // "LINE:COL: error: ..."
  }
}
const std::string kCase = "script = \"s.py\"\n[[case]]\nname = \"c\"\ncall = \"f\"\n";
}  // namespace

TEST_CASE("toml guard: non-ASCII text in strings and comments passes untouched", "[toml_guard]") {
  const std::string text =
      "# Ünïcode comment — «ok»\n"
      "a = \"héllo \\\"q\\\" Ж\"\n"
      "b = 'литерал'\n"
      "c = \"\"\"multi\n  line é \\\\ \\t \"\" \"\"\"\n"
      "d = '''raw \\\n§ stays'''\n"
      "e = \"\\é\"  # an unknown escape in a one-line string: toml++'s error, no hazard\n"
      "f = [\"é\", {g = \"ü\"}]\n";
  const auto g = guard_toml(text);
  CHECK_FALSE(g.hazard);
  CHECK(g.text == text);
  CHECK(g.shifts.empty());
  const std::string bom = "\xEF\xBB\xBF" "a = 1\n";
  CHECK_FALSE(guard_toml(bom).hazard);
  CHECK(guard_toml(bom).text == bom);
}

TEST_CASE("toml guard: non-ASCII outside strings and comments is a located error", "[toml_guard]") {
  auto at = [](const std::string& text) {
    const auto g = guard_toml(text);
    REQUIRE(g.hazard);
    CHECK(g.text == text.substr(0, g.hazard->offset));  // toml++ sees only what came before
    return std::to_string(g.hazard->line) + ":" + std::to_string(g.hazard->column) + " " + g.hazard->message;
  };
  CHECK(at("é = 1\n") == "1:1 unexpected character 'é' (U+00E9): outside strings and comments TOML allows only ASCII");
  CHECK(at("a = \"é\" ж\n").rfind("1:9 unexpected character 'ж' (U+0436)", 0) == 0);
  CHECK(at("# é\nx = [1, §]\n").rfind("2:9 unexpected character '§' (U+00A7)", 0) == 0);
  CHECK(at("a = 1\xFF\n").rfind("1:6 unexpected character byte 0xFF (not UTF-8)", 0) == 0);
  CHECK(at("s = \"\"\"ok\\é\"\"\"\n") == "1:11 unknown escape sequence '\\' followed by 'é' (U+00E9)");
  // Found by the fuzzer: text after the whitespace that follows a backslash.
  CHECK(at("\"\"\"$\\ \t\xC5\xA7" "3(\\*").rfind("1:8 line-ending backslashes must be the last", 0) == 0);
}

TEST_CASE("toml guard: a line-ending backslash before non-ASCII text keeps its value", "[toml_guard]") {
  const std::string text = "s = \"\"\"\\\n   \n  §tail \\\n\t😀\"\"\"\n";
  const auto g = guard_toml(text);
  CHECK_FALSE(g.hazard);
  CHECK(g.text == "s = \"\"\"\\\n   \n  \\u00A7tail \\\n\t\\U0001F600\"\"\"\n");
  REQUIRE(g.shifts.size() == 2);
  // Columns after an escape map back to the file's; lines never move.
  CHECK(g.original_column(3, 3) == 3);   // the escape's own first column
  CHECK(g.original_column(3, 9) == 4);   // 't' of "tail": 6 columns of \u00A7 stand for one
  CHECK(g.original_column(4, 12) == 3);  // the closing quotes after \U0001F600
  CHECK(g.original_column(2, 9) == 9);   // another line: unchanged

  std::string description;
  CHECK(load_error("[experiment]\ndescription = \"\"\"\\\n    Ünïcode, Ж and 😀\"\"\"\n" + kCase, &description) == "");
  CHECK(description == "Ünïcode, Ж and 😀");
}

TEST_CASE("toml guard: the loader reports the file's first error, at the file's own column", "[toml_guard]") {
  // A syntax error before the hazard comes first; the hazard when nothing precedes it.
  CHECK(load_error("a = = 1\nb = é\n").rfind("1:5: error: ", 0) == 0);
  CHECK(load_error("[experiment]\n" + kCase + "x = é\n") == "6:5: error: unexpected character 'é' (U+00E9): "
                                                            "outside strings and comments TOML allows only ASCII");
  CHECK(load_error("s = \"\"\"\\é\"\"\"\n").rfind("1:9: error: unknown escape sequence", 0) == 0);
  // toml++'s own error after an escape it was given, on the same line, at the column of the file.
  const std::string err = load_error("[experiment]\ndescription = \"\"\"\\\n§\"\"\" x\n" + kCase);
  CHECK(err.rfind("3:6: error: ", 0) == 0);
  // The fuzzer's first find (tests/fuzz/corpus/toml190_unicode_whitespace.toml) loads as TOML does.
  CHECK(load_error("s = \"\"\"\\\n\xC2\xA7\"\"\"\n").find("unknown key 's'") != std::string::npos);
}

TEST_CASE("toml guard: a quote inside a token opens no string", "[toml_guard]") {
  // Found by the fuzzer: toml++ reads a malformed value up to its end, through the quote.
  const auto g = guard_toml("[experiment]\nd = 1979-0979-05-52\x01\"\xC2\xA7\\ x\"\n");
  REQUIRE(g.hazard);
  CHECK(g.hazard->line == 2);
  CHECK(g.hazard->message.find("'\xC2\xA7' (U+00A7)") != std::string::npos);
  CHECK(guard_toml("a = 1.\"\xC3\xA9\"\n").hazard);  // a dot in a value is no dotted key
  // Where keys and strings may start, quotes open strings whatever they hold.
  for (const char* ok : {"[a.\"\xC3\xA9\"]\nb.\"\xC5\xBE\" = 1\n", "[[x.'\xC3\xA9']]\n",
                         "t = {a.\"\xC3\xA9\" = 1, \"\xC5\xBE\" = [\"\xC3\xBC\", '\xC3\xBC']}\n",
                         "a = [\n  \"\xC3\xA9\",\n  [\"\xC3\xBC\"],\n]\n", "a=\"\xC3\xA9\"\nb='\xC3\xA9'\n"}) {
    INFO(ok);
    CHECK_FALSE(guard_toml(ok).hazard);
  }
}
