// config/toml_guard: toml++ 3.3.0 is never shown a character its whitespace tables are undefined on
// (marzer/tomlplusplus#190), and files holding such characters load exactly as TOML says.
#include <catch2/catch.hpp>

#include <string>

#include "config/loader.hpp"
#include "config/toml_guard.hpp"
#include "helpers.hpp"
#include "util/strings.hpp"

using gilhost::ConfigErrors;
using gilhost::guard_toml;
using gilhost::is_toml_hazard;
using gilhost::restore_toml;

namespace {
// Loads `text` as an experiment file in a folder holding s.py; returns the error text ("" when it loads).
std::string load_error(const std::string& text, gilhost::Experiment* loaded = nullptr) {
  gilhost_test::TempDir dir;
  gilhost_test::write_file(dir / "s.py", "def f(**_):\n    return 1\n");
  const std::string path = (dir / "x.toml").string();
  try {
    auto ex = gilhost::load_experiment_text(text, path);
    if (loaded) *loaded = ex;
    return "";
  } catch (const ConfigErrors& e) {
    std::string out = e.errors().front().str();
    return out.substr(out.find("x.toml:") + 7);  // "LINE:COL: error: ..."
  }
}
const std::string kCase = "script = \"s.py\"\n[[case]]\nname = \"c\"\ncall = \"f\"\n";

}  // namespace

TEST_CASE("toml guard: the hazardous characters are toml++ 3.3.0's three blocks", "[toml_guard]") {
  // Blocks 0, 11 and 63 of 0x3FA code points from U+00A0, less the whitespace among them.
  std::size_t count = 0;
  for (char32_t c = 0; c < 0x110000; ++c) {
    const bool expected = (c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x3057 && c != 0x3000) ||
                          (c >= 0xFB26 && c <= 0xFEFE);
    if (is_toml_hazard(c) != expected) FAIL("U+" << std::hex << static_cast<unsigned>(c));
    count += expected;
  }
  CHECK(count == 1017 + 1017 + 985);
  for (char32_t ok : {0x20, 0xA0, 0x1680, 0x2000, 0x3000, 0x4E2D, 0xFEFF, 0x1F600}) CHECK_FALSE(is_toml_hazard(ok));
}

TEST_CASE("toml guard: toml++ sees stand-ins, and strings, keys and messages get the characters back",
          "[toml_guard]") {
  const std::string text = "# Ünïcode — «ok»\n\"клю§\" = \"héllo Ж\"\nb = ['é', {c = \"\"\"\\\n  ü\"\"\"}]\n";
  const auto g = guard_toml(text);
  CHECK_FALSE(g.reserved);
  CHECK(g.text != text);
  for (char32_t c : {U'Ü', U'ï', U'«', U'к', U'§', U'é', U'Ж', U'ü'})
    CHECK(g.text.find(gilhost::utf8_encode(c)) == std::string::npos);
  CHECK(g.text.find("\xE2\x80\x94") != std::string::npos);  // '—' (U+2014) is safe: kept as it is
  CHECK(restore_toml(g.text) == text);

  toml::table root = toml::parse(g.text);
  restore_toml(root);
  CHECK(root["клю§"].value_or(std::string()) == "héllo Ж");
  CHECK(root["b"][0].value_or(std::string()) == "é");
  CHECK(root["b"][1]["c"].value_or(std::string()) == "ü");
  // Positions are the file's: one code point stands for one.
  CHECK(root["клю§"].node()->source().begin.line == 2);
  CHECK(root["клю§"].node()->source().begin.column == 10);
  CHECK(root.find("клю§")->first.source().begin.column == 1);
}

TEST_CASE("toml guard: non-ASCII text loads as TOML says, errors at the file's own columns", "[toml_guard]") {
  gilhost::Experiment ex;
  CHECK(load_error("[experiment]\ndescription = \"\"\"\\\n    Ünïcode, Ж and 😀\"\"\"\n" + kCase, &ex) == "");
  CHECK(ex.description == "Ünïcode, Ж and 😀");
  // Outside strings TOML allows only ASCII: toml++'s own error, with the file's character in it.
  const std::string err = load_error("[experiment]\n" + kCase + "x = é\n");
  CHECK(err.rfind("6:5: error: ", 0) == 0);
  CHECK(err.find("\xF3\xB0") == std::string::npos);  // no stand-in (U+F0000 and up) in what users read
  CHECK(load_error("a = = 1\nb = é\n").rfind("1:5: error: ", 0) == 0);
  CHECK(load_error("s = \"\"\"ok\\é\"\"\"\n") == "1:11: error: Error while parsing string: unknown escape sequence '\\é'");
  // toml++ writes escapes of what it saw: the file's character, not the stand-in.
  CHECK(restore_toml("saw '\\U000F0107'") == "saw '\\u01A7'");
  CHECK(load_error("[experiment]\ndescription = \"\"\"\\\n§\"\"\" x\n" + kCase).rfind("3:6: error: ", 0) == 0);
}

TEST_CASE("toml guard: the fuzzer's finds load or fail with a located error", "[toml_guard]") {
  // Each reached toml++'s undefined behaviour once (tests/fuzz/corpus/toml190_*.toml).
  for (const std::string& text : {
           std::string("s = \"\"\"\\\n\xC2\xA7\"\"\"\n"),
           std::string("\"\"\"$\\ \t\xC5\xA7" "3(\\*"),
           std::string("[experiment]\nd = 1979-0979-05-52\x01\"\xC2\xA7\\ x\"\n"),
           std::string("[experiment]\nname = \"evey\"\ndescriptionher = 1979(0979-05-52") + '\0' +
               "{\"\xC2\xA7\\  \n1\"\\\n\xC2\\\\\"\xC2" "e_",
       }) {
    const std::string err = load_error(text);
    INFO(err);
    CHECK(err.find(": error: ") != std::string::npos);
  }
}

TEST_CASE("toml guard: a file holding a stand-in itself is a located error", "[toml_guard]") {
  const std::string raw = "[experiment]\ndescription = \"a" + gilhost::utf8_encode(0xF0107) + "\"\n" + kCase;
  CHECK(load_error(raw).rfind("2:17: error: U+F0107 is a private-use character", 0) == 0);
  CHECK(load_error("a = '\\U000F0107'\n").rfind("1:6: error: U+F0107 (escaped) is a private-use", 0) == 0);
  // The first error of the file comes first.
  CHECK(load_error("a = = 1\nb = '\\U000F0107'\n").rfind("1:5: error: ", 0) == 0);
  // Plane-15 characters that stand for nothing are plain text.
  gilhost::Experiment ex;
  CHECK(load_error("[experiment]\ndescription = \"" + gilhost::utf8_encode(0xF0000) + gilhost::utf8_encode(0xFFFFD) + "\"\n" + kCase, &ex) == "");
  CHECK(ex.description == gilhost::utf8_encode(0xF0000) + gilhost::utf8_encode(0xFFFFD));
}
