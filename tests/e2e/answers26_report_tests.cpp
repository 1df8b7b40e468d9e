// Issue 26 items 3 and 8, end to end: `report` of an ad-hoc script's results prints the vs table `run`
// printed, and `compare` of two such files fits 80 columns with its prose whole.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;
using e2e::has;
using e2e::Sandbox;
using e2e::write_text;
using nlohmann::json;

namespace {


// Two usable GIL builds of different minors ("" when the machine has fewer).
std::vector<std::string> two_builds() {
  std::vector<std::string> out;
  const auto c = gilhost::run_capture({GILHOST_BINARY, "pythons", "--json"}, 300);
  const json list = json::parse(c.out, nullptr, false);
  if (!list.is_array()) return out;
  for (const auto& i : list)
    if (i.value("supported", false) && !i.value("free_threaded", false) && out.size() < 2) out.push_back(i.value("label", ""));
  return out;
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const auto& line : gilhost::split(text, '\n')) widest = std::max(widest, gilhost::display_width(line));
  return widest;
}

}  // namespace

TEST_CASE("report of a script run on two builds keeps run's vs table; compare fits 80 columns", "[e2e][answers26-report]") {
  const auto builds = two_builds();
  REQUIRE(builds.size() == 2);  // the machine has what the test needs
  Sandbox sb("answers26-report");
  write_text(sb.dir / "tiny.py", "total = sum(i * i for i in range(20000))\n");
  const std::string select = " -p " + builds[0] + " -p " + builds[1] + " --repeat 3 --warmup 0";
  for (const char* file : {"a.jsonl", "b.jsonl"}) {
    const auto run = sb.gilhost("run tiny.py" + select + " -o " + file);
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(has(run.out, "vs " + builds[0]));  // run compares the builds with the first
  }
  const auto report = sb.gilhost("report a.jsonl");
  INFO(report.out << report.err);
  CHECK(report.exit_code == 0);
  CHECK(has(report.out, "vs " + builds[0]));
  CHECK(has(report.out, "base"));

  // $COLUMNS is the width a terminal would give.
  const auto fitted = gilhost::run_capture({"bash", "-c", "cd '" + sb.dir.string() + "' && COLUMNS=80 '" + GILHOST_BINARY + "' compare a.jsonl b.jsonl"}, 300);
  INFO(fitted.out << fitted.err);
  const std::string& at80 = fitted.out;
  CHECK(widest_line(at80) <= 80);
  CHECK(has(at80, "experiment: tiny"));
  const auto wide = sb.gilhost("compare a.jsonl b.jsonl --wide");
  CHECK(has(wide.out, "A wall"));
  CHECK(widest_line(wide.out) > 80);
}
