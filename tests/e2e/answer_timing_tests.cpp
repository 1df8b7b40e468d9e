// Issue 19, the answer first: one case time, and failures with their cause.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using e2e::json_lines;
using e2e::Sandbox;
using e2e::write_text;
using e2e::read_text;
using e2e::embeddable_build;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Per case: the medians of the host's case time and of the script's own perf_counter (result wall_s), s.
std::map<std::string, std::pair<double, double>> host_and_script_times(const fs::path& results) {
  std::map<std::string, std::vector<double>> host, script;
  for (const auto& line : json_lines(results)) {
    if (!line.contains("wall_ns") || line.value("warmup", false) || line.value("status", "") != "ok") continue;
    const std::string c = line["case"].get<std::string>();
    host[c].push_back(line["wall_ns"].get<double>() / 1e9);
    script[c].push_back(line["result"]["wall_s"].get<double>());
  }
  std::map<std::string, std::pair<double, double>> out;
  for (const auto& [c, h] : host) out[c] = {median(h), median(script[c])};
  return out;
}

int runs_of(const fs::path& results, const std::string& case_name) {
  int n = 0;
  for (const auto& line : json_lines(results))
    if (line.value("case", "") == case_name && line.contains("wall_ns")) ++n;
  return n;
}

}  // namespace

TEST_CASE("the host's case time is the call: imports at module level and in setup are outside it",
          "[e2e][answer-timing]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("timing");
  write_text(sb.dir / "heavy_at_import.py", "import time\ntime.sleep(0.3)\n");
  write_text(sb.dir / "heavy_late.py", "import time\ntime.sleep(0.3)\n");
  write_text(sb.dir / "timed.py",
        "import time\n"
        "import heavy_at_import  # 0.3 s, before the host's clock\n"
        "def _timed(ms):\n"
        "    t0 = time.perf_counter()\n"
        "    sum(range(200_000)); time.sleep(ms / 1000)\n"
        "    return {'wall_s': time.perf_counter() - t0}\n"
        "def module_level(ms=100):\n"
        "    return _timed(ms)\n"
        "def load_late(ms=100):\n"
        "    import heavy_late\n"
        "def after_setup(ms=100):\n"
        "    import heavy_late  # imported by setup already: free\n"
        "    return _timed(ms)\n"
        "def imports_inside(ms=100):\n"
        "    import heavy_late  # 0.3 s inside the host's time, outside the script's\n"
        "    return _timed(ms)\n");
  write_text(sb.dir / "timed.toml",
        "[experiment]\nname = \"timed\"\nscript = \"timed.py\"\nrepeat = 3\n"
        "[[case]]\nname = \"module_level\"\ncall = \"module_level\"\n"
        "[[case]]\nname = \"after_setup\"\ncall = \"after_setup\"\nsetup = \"load_late\"\n"
        "[[case]]\nname = \"imports_inside\"\ncall = \"imports_inside\"\n");
  const auto r = sb.gilhost("run timed.toml -p " + build + " --no-lock -o timed.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto times = host_and_script_times(sb.dir / "timed.jsonl");
  REQUIRE(times.size() == 3);
  auto agree = [](std::pair<double, double> t) {
    const double diff = std::fabs(t.first - t.second);
    return diff <= 0.020 || diff <= 0.10 * t.second;
  };
  std::string seen;
  for (const auto& [c, t] : times) seen += c + ": host " + std::to_string(t.first) + " s, script " + std::to_string(t.second) + " s\n";
  INFO(seen);
  CHECK(agree(times.at("module_level")));
  CHECK(agree(times.at("after_setup")));
  CHECK_FALSE(agree(times.at("imports_inside")));  // the test can fail: an import in the call is timed
  CHECK(times.at("imports_inside").first - times.at("imports_inside").second > 0.25);
  // setup's cost is prepare time, recorded beside the case time.
  // Of it, the script's own share (its import, the 0.3 s module it imports at module level, and setup) is
  // said apart from gilhost's set-up.
  for (const auto& line : json_lines(sb.dir / "timed.jsonl")) {
    if (line.value("type", "") != "run") continue;
    INFO(line.value("case", "") << ": prepare " << line["prepare_ns"] << " ns, import " << line.value("import_ns", json()));
    REQUIRE(line.contains("import_ns"));
    CHECK(line["import_ns"].get<double>() <= line["prepare_ns"].get<double>());
    CHECK(line["import_ns"].get<double>() > (line["case"] == "after_setup" ? 0.55e9 : 0.28e9));
  }
}

TEST_CASE("a setup that names no function is said before anything runs, located in the file", "[e2e][answer-timing]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("timing");
  write_text(sb.dir / "s.py", "def f():\n    return 1\n");
  write_text(sb.dir / "s.toml", "[experiment]\nname = \"s\"\nscript = \"s.py\"\nrepeat = 1\n"
                           "[[case]]\nname = \"c\"\ncall = \"f\"\nsetup = \"nowhere\"\n");
  const auto r = sb.gilhost("run s.toml -p " + build + " --no-lock -o s.jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("s.toml:8:9: setup = \"nowhere\": s.py has no top-level function 'nowhere' (functions: f)") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(sb.dir / "s.jsonl"));  // nothing ran
}

TEST_CASE("a failing case shows its message and traceback, is run once, in run, md and html",
          "[e2e][answer-timing]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("timing");
  write_text(sb.dir / "bad.py", "def lookup():\n    table = {}\n    return table['missing-key']\n"
                           "def nap():\n    import time\n    time.sleep(30)\n");
  write_text(sb.dir / "bad.toml", "[experiment]\nname = \"bad\"\nscript = \"bad.py\"\nrepeat = 3\ntimeout = 1\n"
                             "[[case]]\nname = \"lookup\"\ncall = \"lookup\"\n"
                             "[[case]]\nname = \"nap\"\ncall = \"nap\"\n");
  const auto r = sb.gilhost("run bad.toml -p " + build + " --no-lock -o bad.jsonl");
  INFO(r.out << r.err);
  CHECK(r.out.find("KeyError: 'missing-key'") != std::string::npos);
  CHECK(r.out.find("return table['missing-key']") != std::string::npos);  // the traceback's last lines
  CHECK(r.out.find("timed out after") != std::string::npos);
  CHECK(r.out.find("not repeated: failed in every run of the first round") != std::string::npos);
  CHECK(runs_of(sb.dir / "bad.jsonl", "lookup") == 1);
  CHECK(runs_of(sb.dir / "bad.jsonl", "nap") == 1);
  // The whole stderr beside the results file, named in the record.
  std::string stderr_file;
  for (const auto& line : json_lines(sb.dir / "bad.jsonl"))
    if (line.value("case", "") == "lookup") stderr_file = line.value("stderr_file", "");
  REQUIRE_FALSE(stderr_file.empty());
  CHECK(read_text(stderr_file).find("Traceback") != std::string::npos);

  const auto md = sb.gilhost("report bad.jsonl --format md");
  INFO(md.out << md.err);
  CHECK(md.out.find("KeyError: 'missing-key'") != std::string::npos);
  CHECK(md.out.find("return table['missing-key']") != std::string::npos);
  const auto html = sb.gilhost("report bad.jsonl --format html");
  CHECK(html.out.find("<details><summary><b>lookup @") != std::string::npos);
  const bool message_in_html = html.out.find("KeyError: &#39;missing-key&#39;") != std::string::npos ||
                               html.out.find("KeyError: 'missing-key'") != std::string::npos;
  CHECK(message_in_html);
  CHECK(html.out.find("return table[") != std::string::npos);
  const auto j = sb.gilhost("report bad.jsonl --format json");
  const json summary = json::parse(j.out, nullptr, false);
  REQUIRE(summary.is_object());
  bool cause_in_json = false;
  for (const auto& f : summary["experiments"][0]["failures"]["failed"])
    cause_in_json |= f.value("cause", "") == "KeyError: 'missing-key'" && f.value("case", "") == "lookup";
  CHECK(cause_in_json);

  // --repeat-failures repeats anyway.
  const auto again = sb.gilhost("run bad.toml -p " + build + " --case lookup --repeat-failures --no-lock -o again.jsonl");
  CHECK(runs_of(sb.dir / "again.jsonl", "lookup") == 3);
}

TEST_CASE("a cell stops repeating once its time budget is spent, and the report says why", "[e2e][answer-timing]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("timing");
  write_text(sb.dir / "slow.py", "def slow():\n    import time\n    time.sleep(1.5)\n");
  write_text(sb.dir / "slow.toml", "[experiment]\nname = \"slow\"\nscript = \"slow.py\"\nrepeat = 10\ncell_budget = 3\n"
                              "[[case]]\nname = \"slow\"\ncall = \"slow\"\n");
  const auto r = sb.gilhost("run slow.toml -p " + build + " --no-lock -o slow.jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const int runs = runs_of(sb.dir / "slow.jsonl", "slow");
  CHECK(runs >= 2);
  CHECK(runs <= 3);
  CHECK(r.out.find(std::to_string(runs) + " of 10 runs: the cell's time budget of 3 s was spent") != std::string::npos);
  const auto report = sb.gilhost("report slow.jsonl");
  CHECK(report.out.find("the cell's time budget of 3 s was spent") != std::string::npos);
  // --max-cell-time 0: no budget (a shorter run keeps every repeat).
  const auto all = sb.gilhost("run slow.toml -p " + build + " --repeat 3 --max-cell-time 0 --no-lock -o all.jsonl");
  CHECK(runs_of(sb.dir / "all.jsonl", "slow") == 3);
}
