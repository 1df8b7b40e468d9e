// Issue 25 item 9: `report --format html` of a large file holds the runs without their timelines, and
// reads each lane chart's run again from the file: its memory grows with the runs, not their timelines.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/subprocess.hpp"

using nlohmann::json;
using e2e::Sandbox;
using e2e::read_text;
using e2e::write_text;

namespace {

// The fixture with every thread's timeline stretched to 2,000 segments (the most a record keeps).
std::string with_long_timelines(const std::string& fixture) {
  std::istringstream in(fixture);
  std::string line, out;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("type", "") == "run" && j.contains("thread_states") && j["thread_states"].is_object())
      for (auto& t : j["thread_states"]["threads"]) {
        const std::int64_t from = t.value("start_ns", std::int64_t{0}) / 1000, to = t.value("end_ns", std::int64_t{0}) / 1000;
        json timeline = json::array();
        for (std::int64_t k = 0; k < 2000 && to > from; ++k) timeline.push_back({from + (to - from) * k / 2000, k % 2 ? "gil" : "cpu"});
        t["timeline_us"] = timeline;
      }
    out += (j.is_discarded() ? line : j.dump()) + "\n";
  }
  return out;
}

// gilhost's peak RSS in kB for `args`, from /usr/bin/time; -1 where that is missing.
long peak_kb(const Sandbox& sb, const std::string& args) {
  if (::access("/usr/bin/time", X_OK) != 0) return -1;
  const std::string cmd = "cd '" + sb.dir.string() + "' && /usr/bin/time -f 'peak %M' '" + GILHOST_BINARY + "' " + args;
  const auto r = gilhost::run_capture({"bash", "-c", cmd}, 300.0);
  const auto at = r.err.rfind("peak ");
  return r.exit_code == 0 && at != std::string::npos ? std::stol(r.err.substr(at + 5)) : -2;
}

}  // namespace

TEST_CASE("25.9 an HTML report of a large file holds its runs without their timelines", "[e2e][hostile][memory]") {
  if (e2e::kUnderAsan) {
    WARN("skipped under ASan: its allocator changes what a peak RSS means");
    return;
  }
  Sandbox sb("memory-html");
  const std::string one = with_long_timelines(read_text(std::string(GILHOST_SOURCE_DIR) + "/tests/fixtures/report_threads.jsonl"));
  std::string big;
  for (int k = 0; k < 30; ++k) big += one;  // each copy a session of its own
  write_text(sb.dir / "one.jsonl", one);
  write_text(sb.dir / "big.jsonl", big);
  const long one_kb = peak_kb(sb, "report one.jsonl --format html -o one.html");
  if (one_kb == -1) {
    WARN("skipped: no /usr/bin/time to read a peak RSS with");
    return;
  }
  const long big_kb = peak_kb(sb, "report big.jsonl --format html -o big.html");
  REQUIRE(one_kb > 0);
  REQUIRE(big_kb > 0);
  const long file_kb = static_cast<long>(big.size() / 1024);
  INFO("peak " << one_kb << " kB for one copy, " << big_kb << " kB for 30 (" << file_kb << " kB of file)");
  // The timelines are most of the file; with them in memory, the peak grew by more than the file's size.
  CHECK(big_kb - one_kb < file_kb / 2);
  const std::string page = read_text(sb.dir / "big.html");
  CHECK(page.find("class=\"lanes\"") != std::string::npos);  // the lanes are drawn, read again from the file
  CHECK(page.rfind("</html>") != std::string::npos);
}
