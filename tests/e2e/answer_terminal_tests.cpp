// Issue 19, the answer first: the terminal: progress, output that fits, ad-hoc answers, loose ends, the time budget per cell.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "sandbox.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using e2e::Sandbox;
using e2e::write_text;

namespace {

// gilhost ARGS in the sandbox under a pseudo-terminal of `columns` columns (script(1)): stdout and stderr
// both come back in out, as a terminal shows them.
gilhost::Captured gilhost_on_terminal(const Sandbox& sb, const std::string& args, int columns = 80) {
  const std::string inner = "stty cols " + std::to_string(columns) + " 2>/dev/null; exec '" + std::string(GILHOST_BINARY) + "' " + args;
  const std::string cmd = "cd '" + sb.dir.string() + "' && XDG_CACHE_HOME='" + (sb.dir / "cache").string() +
                          "' COLUMNS=" + std::to_string(columns) + " script -qfec \"" + inner + "\" /dev/null";
  return gilhost::run_capture({"bash", "-c", cmd}, 600);
}

}  // namespace

TEST_CASE("4: on a terminal the running case's elapsed time ticks, with its timeout", "[e2e][answer-terminal]") {
  Sandbox sb("progress-ticks");
  write_text(sb.dir / "sleepy.py", "import time\ntime.sleep(3.5)\n");
  const auto r = gilhost_on_terminal(sb, "run sleepy.py -p 3.12 --repeat 1 --warmup 0 --timeout 40 --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::set<std::string> seconds;
  const std::regex tick(R"(\[1/1\] [^\r\n]* @ 3\.12[^ ]*  (\d+)s of 40s timeout · total)");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), tick), end; it != end; ++it) seconds.insert((*it)[1]);
  CHECK(seconds.size() >= 3);  // 0s, then about once a second: 1s, 2s, 3s
  CHECK(seconds.count("2") == 1);
}

TEST_CASE("4: the default timeout is in run --help", "[e2e][answer-terminal]") {
  Sandbox sb("timeout-help");
  const auto r = sb.gilhost("run --help");
  CHECK(r.out.find("300 s if it says none") != std::string::npos);
}

TEST_CASE("8: an ad-hoc script on two builds: time and cpu/wall, no empty ✓, the ratio to the first, its output", "[e2e][answer-terminal]") {
  Sandbox sb("adhoc-answer");
  write_text(sb.dir / "tiny.py", "s = sum(i * i for i in range(100000))\nprint('the sum is', s)\n");
  const auto r = sb.gilhost("run tiny.py -p 3.12 -p 3.13 --repeat 2 --warmup 0 --no-lock --show-output -o r.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::string grid_row;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("tiny  ", 0) == 0 && grid_row.empty()) grid_row = line;
  // Each cell: the median with its interval and run count (report/evidence), then cpu/wall.
  CHECK(std::regex_search(grid_row, std::regex(R"(ms \([0-9.]+–[0-9.]+\) n=2  cpu/wall [0-9.]+ +[0-9.]+ ms)")));
  CHECK(grid_row.find("✓") == std::string::npos);
  CHECK(grid_row.find(" - ") == std::string::npos);
  CHECK(r.out.find("vs 3.12.") != std::string::npos);  // each build against the first
  CHECK(std::regex_search(r.out, std::regex(R"(── stdout of tiny @ 3\.13[^ ]* \(run 2\) ──\nthe sum is 333328333350000\n)")));

  const auto html = sb.gilhost("report r.jsonl --format html -o r.html");
  REQUIRE(html.exit_code == 0);
  std::ifstream page(sb.dir / "r.html");
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK(text.find("Every expectation held") == std::string::npos);  // none was set

  const auto against = sb.gilhost("run tiny.py -p 3.12 -p 3.13 --repeat 1 --warmup 0 --no-lock --baseline-python 3.13 -o s.jsonl");
  CHECK(std::regex_search(against.out, std::regex(R"(\nvs 3\.13[.0-9]*  +3\.12)")));
}

TEST_CASE("8: a script with expectations keeps its ✓ and the footer", "[e2e][answer-terminal]") {
  Sandbox sb("adhoc-expect");
  write_text(sb.dir / "e.toml",
        "[experiment]\nname = \"e\"\nscript = \"e.py\"\nrepeat = 1\nwarmup = 0\n[[case]]\nname = \"one\"\ncall = \"f\"\n[[case.expect]]\nresult = 2\n");
  write_text(sb.dir / "e.py", "def f():\n    return 1 + 1\n");
  const auto r = sb.gilhost("run e.toml -p 3.12 --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("2 ✓") != std::string::npos);
  REQUIRE(sb.gilhost("report r.jsonl --format html -o r.html").exit_code == 0);
  std::ifstream page(sb.dir / "r.html");
  const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK(text.find("Every expectation held") != std::string::npos);
}

namespace {

// $COLUMNS for the gilhost runs of one test (they inherit our environment).
struct Columns {
  explicit Columns(int n) { ::setenv("COLUMNS", std::to_string(n).c_str(), 1); }
  ~Columns() { ::unsetenv("COLUMNS"); }
};

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) widest = std::max(widest, gilhost::display_width(line));
  return widest;
}

}  // namespace

TEST_CASE("5: at 80 columns every line fits; the grid first, the views and readings last; --wide unabridged",
          "[e2e][answer-terminal]") {
  Sandbox sb("fits-80");
  const std::string cfg = std::string(GILHOST_SOURCE_DIR) + "/configs/cpu_bound.toml";
  const std::string args = "run '" + cfg + "' --quick -p 3.12 -p 3.14t --case sequential --case 'threads*' --no-lock";
  Columns columns(80);
  const auto r = sb.gilhost(args + " -o a.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(widest_line(r.out) <= 80);
  const std::size_t grid = r.out.find("\ncase "), views = r.out.find("\nviews "), readings = r.out.find("\nreadings ");
  REQUIRE(grid != std::string::npos);
  REQUIRE(views != std::string::npos);
  CHECK(grid < views);
  CHECK(r.out.find("\nscaling of threads") < views);
  CHECK(r.out.find("\nresults: ") < views);
  if (readings != std::string::npos) CHECK(views < readings);
  CHECK(r.out.find(" 3.14.7t\n") != std::string::npos);  // the full build label, as the other tables name it

  const auto wide = sb.gilhost("report a.jsonl --wide");
  CHECK(widest_line(wide.out) > 80);
  CHECK(wide.out.find("3.14.7t") != std::string::npos);
  const auto narrow = sb.gilhost("report a.jsonl");
  CHECK(widest_line(narrow.out) <= 80);
}

TEST_CASE("5: gilhost pythons fits 80 columns", "[e2e][answer-terminal]") {
  Sandbox sb("pythons-80");
  Columns columns(80);
  const auto r = sb.gilhost("pythons");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(widest_line(r.out) <= 80);
  CHECK(r.out.find("3.12") != std::string::npos);
}
