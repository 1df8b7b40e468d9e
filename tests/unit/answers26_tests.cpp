// Issue 26, plain answers: `pythons` at 80 columns (8), the call-name check's lines (1).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/pythons.hpp"
#include "util/strings.hpp"

namespace {

std::vector<gilhost::Interpreter> builds() {
  std::vector<gilhost::Interpreter> out(2);
  out[0].label = out[0].version_full = "3.12.1";
  out[0].executable = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  out[0].libpython = "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0";
  out[0].shared = true;
  out[0].source = "pyenv";
  out[1].label = out[1].version_full = "3.8.18";
  out[1].executable = "/root/.pyenv/versions/3.8.18/bin/python3.8";
  out[1].source = "pyenv";
  out[1].supported = false;
  out[1].unsupported_reason = "CPython 3.8 is older than 3.9, the oldest the runner embeds (it calls 3.9's API); install "
                              "3.9 or newer";
  return out;
}

}  // namespace

TEST_CASE("pythons at 80 columns says the whole reason a build is unusable", "[answers26][pythons]") {
  const std::string text = gilhost::pythons_table_text(builds(), 80);
  INFO(text);
  std::string joined;
  for (const auto& line : gilhost::split(text, '\n')) {
    CHECK(gilhost::display_width(line) <= 80);
    joined += " " + gilhost::trim(line);
  }
  // Every word of the reason is there, none cut with "…".
  for (const auto& word : gilhost::split(builds()[1].unsupported_reason, ' ')) CHECK(joined.find(word) != std::string::npos);
  CHECK(joined.find("3.8.18 is unusable: CPython 3.8 is older") != std::string::npos);
  // Without a width (a file), the reason stays in its cell.
  CHECK(gilhost::pythons_table_text(builds(), 0).find("unsupported: CPython 3.8") != std::string::npos);
}

TEST_CASE("wrap_words wraps at spaces and indents the lines after the first", "[answers26][pythons]") {
  CHECK(gilhost::wrap_words("aa bb cc", 5, 0, 2) == "aa bb\n  cc");
  CHECK(gilhost::wrap_words("aa bb cc", 0, 2, 4) == "  aa bb cc");
  CHECK(gilhost::wrap_words("averylongword x", 4, 0, 1) == "averylongword\n x");
}
