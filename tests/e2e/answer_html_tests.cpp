// Issue 19, the answer first: the HTML page with the answer first, and honest comparisons with the articles.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using e2e::Sandbox;
using e2e::read_text;
using e2e::embeddable_build;

namespace {

// Two tiny cases whose ratio has an article figure; the title and description state the size as {n}.
void write_fixture(const Sandbox& sb) {
  std::ofstream(sb.dir / "loop.py") << "def spin(n):\n    return sum(i for i in range(n))\n";
  std::ofstream(sb.dir / "sized.toml") << "[experiment]\nscript = \"loop.py\"\ndescription = \"spin {n} times\"\nrepeat = 1\n"
                                          "[params]\nn = 30_000\n"
                                          "[[case]]\nname = \"once\"\ncall = \"spin\"\n"
                                          "[[case]]\nname = \"twice\"\ncall = \"spin\"\nparams = { n = 60_000 }\n"
                                          "[[view]]\ntitle = \"twice / once at n = {n}\"\nkind = \"ratio\"\na = \"twice\"\nb = \"once\"\n"
                                          "article = 7.77\n";
}

}  // namespace

TEST_CASE("answer-html: the article's figure only beside a run of the file's own sizes; titles say the sizes used",
          "[e2e][answer-html]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("answer-html");
  write_fixture(sb);
  const auto full = sb.gilhost("run sized.toml -p " + build + " --no-lock -o full.jsonl");
  INFO(full.out << full.err);
  REQUIRE(full.exit_code == 0);
  CHECK(full.out.find("7.77x") != std::string::npos);
  CHECK(full.out.find("twice / once at n = 30,000") != std::string::npos);
  CHECK(full.out.find("not comparable") == std::string::npos);

  const auto small = sb.gilhost("run sized.toml -p " + build + " --no-lock -o small.jsonl --param n=2000");
  INFO(small.out << small.err);
  REQUIRE(small.exit_code == 0);
  CHECK(small.out.find("twice / once at n = 2,000") != std::string::npos);
  CHECK(small.out.find("article (n = 30,000; this run n = 2,000): not comparable") != std::string::npos);
  CHECK(small.out.find("7.77x") == std::string::npos);

  for (const char* file : {"full", "small"}) {
    const auto r = sb.gilhost(std::string("report ") + file + ".jsonl --format html -o " + file + ".html");
    REQUIRE(r.exit_code == 0);
  }
  const std::string full_html = read_text(sb.dir / "full.html"), small_html = read_text(sb.dir / "small.html");
  CHECK(full_html.find("<line class=\"article\"") != std::string::npos);
  CHECK(full_html.find("spin 30,000 times") != std::string::npos);
  CHECK(small_html.find("<line class=\"article\"") == std::string::npos);
  CHECK(small_html.find("spin 2,000 times") != std::string::npos);
  CHECK(small_html.find("article (n = 30,000; this run n = 2,000): not comparable") != std::string::npos);
  // The answer first: the summary (views, grid) before the folded details.
  const auto summary = small_html.find("<div class=\"summary\">"), folded = small_html.find("<details class=\"more");
  REQUIRE(summary != std::string::npos);
  REQUIRE(folded != std::string::npos);
  CHECK(summary < folded);
  CHECK(small_html.find("<svg class=\"view\"") < folded);
  CHECK(small_html.find("<table class=\"grid\"") < folded);
}
