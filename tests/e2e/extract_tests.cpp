// End-to-end, [case.extract] on a script gilhost did not write: CPython's Tools/ftscalingbench/ftscalingbench.py,
// taken at test time from the source tarball the free-threaded 3.14 build was built from (.ci/build-pythons
// keeps it in gilhost's download cache), run by tests/fixtures/extract_ftscalingbench.toml. The figures it
// prints must arrive as metrics equal to what it printed, and show in the report and in compare.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build/source.hpp"
#include "util/paths.hpp"
#include "sandbox.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kGilhost = GILHOST_BINARY;
const std::string kSource = GILHOST_SOURCE_DIR;

using e2e::Sandbox;
using e2e::json_lines;

// A free-threaded 3.14+ build made by `gilhost build` (ftscalingbench is in its source tree from 3.14), and
// the tarball it was built from: where `gilhost build URL` downloaded it, or the tarball it was given.
struct SourceBuild {
  std::string label, tarball, why_not;
};

SourceBuild free_threaded_source_build() {
  SourceBuild found;
  const auto c = gilhost::run_capture({kGilhost, "pythons", "--json"}, 120);
  const json list = json::parse(c.out, nullptr, false);
  if (!list.is_array()) return {"", "", "gilhost pythons --json printed no list: " + c.err};
  for (const auto& i : list) {
    const std::string version = i.value("version", "");
    if (!i.value("free_threaded", false) || !i.value("shared", false) || !i.value("supported", false)) continue;
    if (version.rfind("3.14", 0) != 0 && version.rfind("3.15", 0) != 0) continue;
    std::ifstream in(fs::path(i.value("prefix", "")) / "gilhost-build.json");
    const json manifest = json::parse(in, nullptr, false);
    if (!manifest.is_object()) continue;
    const std::string source = manifest.value("source", "");
    const std::string kind = manifest.value("source_kind", "");
    std::string tarball;
    if (kind == "url")
      tarball = (fs::path(gilhost::cache_dir()) / "downloads" / gilhost::download_file_name(source)).string();
    else if (kind == "tarball")
      tarball = source;
    if (tarball.empty() || !fs::is_regular_file(tarball)) {
      found.why_not = i.value("label", "") + " was built from " + source + ", but its tarball is not at " + tarball;
      continue;
    }
    return {i.value("label", ""), tarball, ""};
  }
  if (found.why_not.empty()) found.why_not = "no free-threaded 3.14 build made by gilhost build";
  found.why_not += " (bash .ci/build-pythons builds 3.14.7t and keeps its tarball)";
  return found;
}


// What ftscalingbench printed, read here without gilhost's regexes: "NAME  1.9x faster" -> NAME: 1.9,
// "NAME  12.3 ms" -> NAME_ms: 12.3, "Running benchmarks with 2 threads" -> threads: 2.
std::map<std::string, double> printed_figures(const std::string& stdout_text) {
  std::map<std::string, double> out;
  std::istringstream lines(stdout_text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.size() == 5 && w[0] == "Running" && w[4] == "threads") out["threads"] = std::stod(w[3]);
    else if (w.size() == 3 && (w[2] == "faster" || w[2] == "slower") && w[1].back() == 'x')
      out[w[0]] = std::stod(w[1].substr(0, w[1].size() - 1));
    else if (w.size() == 3 && w[2] == "ms")
      out[w[0] + "_ms"] = std::stod(w[1]);
  }
  return out;
}

}  // namespace

TEST_CASE("extract: CPython's ftscalingbench.py, its printed figures as metrics in results, report and compare",
          "[e2e][extract]") {
  const SourceBuild build = free_threaded_source_build();
  INFO(build.why_not);
  REQUIRE_FALSE(build.label.empty());
  Sandbox sb("extract");
  // Only the one file comes out of the tarball, beside a copy of the fixture that names it.
  const auto tar = gilhost::run_capture({"tar", "-xf", build.tarball, "-C", sb.dir.string(), "--wildcards",
                                         "*/Tools/ftscalingbench/ftscalingbench.py"}, 120);
  INFO(tar.err);
  REQUIRE(tar.exit_code == 0);
  fs::path script;
  for (const auto& e : fs::recursive_directory_iterator(sb.dir))
    if (e.path().filename() == "ftscalingbench.py") script = e.path();
  REQUIRE_FALSE(script.empty());
  fs::rename(script, sb.dir / "ftscalingbench.py");
  fs::copy_file(kSource + "/tests/fixtures/extract_ftscalingbench.toml", sb.dir / "ftscalingbench.toml");

  // One more regex from the command line, which this script never satisfies: the runs stay ok, and say so.
  const auto run = sb.gilhost("run ftscalingbench.toml -p '" + build.label +
                              "' -o r.jsonl --no-lock --extract 'absent=^absent benchmark ([0-9.]+)'");
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);

  const auto lines = json_lines(sb.dir / "r.jsonl");
  REQUIRE(lines.size() == 5);  // the meta, 2 cases x 2 runs
  const json& cases = lines[0]["experiment"]["cases"];
  REQUIRE(cases.size() == 2);
  CHECK(cases[0]["extract"]["pyfunction"] == "^pyfunction\\s+([0-9.]+)x (?:faster|slower)$");
  CHECK(cases[0]["extract"]["threads"] == "^Running benchmarks with (\\d+) threads$");  // [experiment.extract]
  CHECK(cases[1]["extract"]["generator_ms"] == "^generator\\s+([0-9.]+) ms$");
  CHECK(cases[1]["extract"]["absent"] == "^absent benchmark ([0-9.]+)");
  CHECK(lines[0]["experiment"]["extract_options"] == json::array({"absent=^absent benchmark ([0-9.]+)"}));

  const std::map<std::string, std::vector<std::string>> expected{
      {"scaling", {"threads", "pyfunction", "generator", "create_closure"}},
      {"parallel", {"threads", "pyfunction_ms", "generator_ms"}}};
  std::map<std::string, int> runs_of;
  for (std::size_t n = 1; n < lines.size(); ++n) {
    const json& r = lines[n];
    INFO(r.dump(2));
    REQUIRE(r["type"] == "run");
    CHECK(r["status"] == "ok");
    ++runs_of[r["case"]];
    const auto printed = printed_figures(r["stdout"].get<std::string>());
    const json& metrics = r["metrics"];
    CHECK(metrics.size() == expected.at(r["case"]).size());
    for (const auto& name : expected.at(r["case"])) {
      INFO(name);
      REQUIRE(metrics.contains(name));
      REQUIRE(metrics[name].is_number());
      CHECK(metrics[name].get<double>() > 0);
      REQUIRE(printed.count(name) == 1);
      CHECK(metrics[name].get<double>() == printed.at(name));
    }
    CHECK(metrics["threads"] == 2);
    CHECK(metrics["threads"].is_number_integer());
    CHECK_FALSE(metrics.contains("absent"));
    CHECK(r["note"].get<std::string>().find("extract: no line of stdout matches absent = '^absent benchmark ([0-9.]+)'") !=
          std::string::npos);
  }
  CHECK(runs_of == std::map<std::string, int>{{"scaling", 2}, {"parallel", 2}});

  // The report shows each metric beside the wall times, with where it came from.
  const auto report = sb.gilhost("report r.jsonl");
  INFO(report.out << report.err);
  REQUIRE(report.exit_code == 0);
  CHECK(report.out.find("metrics (the scripts' own figures") != std::string::npos);
  for (const char* name : {"pyfunction ", "generator ", "create_closure ", "pyfunction_ms ", "generator_ms ", "threads "})
    CHECK(report.out.find(name) != std::string::npos);
  CHECK(report.out.find("pyfunction: the first line of stdout matching '^pyfunction\\s+([0-9.]+)x (?:faster|slower)$'") !=
        std::string::npos);
  const auto md = sb.gilhost("report r.jsonl -f md");
  CHECK(md.out.find("### Metrics") != std::string::npos);
  CHECK(md.out.find("| scaling | pyfunction |") != std::string::npos);
  const auto html = sb.gilhost("report r.jsonl -f html");
  CHECK(html.out.find("create_closure") != std::string::npos);
  CHECK(html.out.find("Metrics") != std::string::npos);

  // The exports carry them: CSV a metrics column per run, JSON each cell's statistics.
  const auto csv = sb.gilhost("report r.jsonl -f csv");
  CHECK(csv.out.substr(0, csv.out.find('\r')).find(",result,metrics") != std::string::npos);
  CHECK(csv.out.find("\"{\"\"create_closure\"\":") != std::string::npos);
  const json summary = json::parse(sb.gilhost("export r.jsonl").out);
  for (const auto& cell : summary["experiments"][0]["cells"]) {
    INFO(cell.dump());
    CHECK(cell["metrics"]["threads"]["median"] == 2.0);
    CHECK(cell["metrics"]["threads"]["n"] == 2);
  }

  // compare puts each metric of A beside B's.
  const auto cmp = sb.gilhost("compare r.jsonl r.jsonl -f json");
  INFO(cmp.err);
  REQUIRE(cmp.exit_code == 0);
  const json c = json::parse(cmp.out);
  int compared = 0;
  for (const auto& m : c["metrics"]) {
    ++compared;
    CHECK(m["a"]["n"] == 2);
    CHECK(m["ratio_b_over_a"] == 1.0);
  }
  CHECK(compared == 7);
  const auto cmp_text = sb.gilhost("compare r.jsonl r.jsonl");
  CHECK(cmp_text.out.find("metrics (the scripts' own figures") != std::string::npos);
  CHECK(cmp_text.out.find("pyfunction_ms") != std::string::npos);
}

TEST_CASE("extract: --extract on ftscalingbench.py run as a script, no TOML file", "[e2e][extract]") {
  const SourceBuild build = free_threaded_source_build();
  INFO(build.why_not);
  REQUIRE_FALSE(build.label.empty());
  Sandbox sb("extract");
  const auto tar = gilhost::run_capture({"tar", "-xf", build.tarball, "-C", sb.dir.string(), "--wildcards",
                                         "--strip-components=3", "*/Tools/ftscalingbench/ftscalingbench.py"}, 120);
  REQUIRE(tar.exit_code == 0);
  REQUIRE(fs::is_regular_file(sb.dir / "ftscalingbench.py"));
  const auto run = sb.gilhost("run ftscalingbench.py -p '" + build.label + "' --repeat 1 -o r.jsonl --no-lock " +
                              "--extract 'pyfunction=^pyfunction\\s+([0-9.]+)x (faster|slower)' -- -t 2 --scale 10 pyfunction");
  // Two groups: refused before anything runs, at the option.
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("--extract pyfunction=") != std::string::npos);
  CHECK(run.err.find("has 2 capture groups") != std::string::npos);

  const auto ok = sb.gilhost("run ftscalingbench.py -p '" + build.label + "' --repeat 1 -o r.jsonl --no-lock " +
                             "--extract 'pyfunction=^pyfunction\\s+([0-9.]+)x' -- -t 2 --scale 10 pyfunction");
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  const auto lines = json_lines(sb.dir / "r.jsonl");
  REQUIRE(lines.size() == 2);
  const json& r = lines[1];
  INFO(r.dump(2));
  REQUIRE(r["metrics"].contains("pyfunction"));
  CHECK(r["metrics"]["pyfunction"].get<double>() == printed_figures(r["stdout"].get<std::string>()).at("pyfunction"));
  CHECK(lines[0]["experiment"]["cases"][0]["extract"]["pyfunction"] == "^pyfunction\\s+([0-9.]+)x");
}
