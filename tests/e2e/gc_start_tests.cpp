// End to end: gilhost's own start-up work in the runner (its bootstrap's code, functions and spec) brings no
// garbage collection forward. A script that reads, as it runs its module-level code, how many young-generation
// collections its interpreter has made reads no more under gilhost than under `python script.py` (which
// compiles the script as it starts, where gilhost may read it compiled). Start-up leaves some builds' young
// generation just under its threshold (3.14.7), and the bootstrap's objects used to tip it over
// (runner/interpreter_session.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/subprocess.hpp"

using e2e::Sandbox;
using nlohmann::json;

namespace {

constexpr const char* kProbe =
    "import gc\nAT_IMPORT = gc.get_stats()[0]['collections']\n\n\ndef probe():\n    return AT_IMPORT\n\n\n"
    "if __name__ == '__main__':\n    print(AT_IMPORT)\n";

}  // namespace

TEST_CASE("gilhost's start-up work makes no young collection that python's start-up does not", "[e2e][gc_start]") {
  std::vector<e2e::SharedBuild> builds = e2e::shared_builds();
  builds.erase(std::remove_if(builds.begin(), builds.end(), [](const auto& b) { return b.free_threaded; }), builds.end());
  REQUIRE_FALSE(builds.empty());
  for (const auto& b : builds) {
    INFO(b.label);
    Sandbox sb("gcstart");
    e2e::write_text(sb.dir / "probe.py", kProbe);
    const auto plain = e2e::python_script(b, sb, "probe.py");
    INFO(plain.err);
    REQUIRE(plain.exit_code == 0);
    const long by_python = std::stol(plain.out);
    // Compiled beforehand, whatever PYTHONDONTWRITEBYTECODE says: compiling it through the import system
    // alone makes hundreds of objects on 3.9-3.11, which is the import's cost, not the bootstrap's.
    REQUIRE(gilhost::run_capture({b.executable, "-m", "py_compile", (sb.dir / "probe.py").string()}, 60).exit_code == 0);
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"probe.py\"\nrepeat = 3\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"probe\"\ncall = \"probe\"\n");
    const auto r = sb.gilhost("run x.toml -p " + b.label + " --no-lock -o a.jsonl");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<json> runs = e2e::run_records(sb.dir / "a.jsonl");
    REQUIRE(runs.size() == 3);
    // The session's first run compiles the bootstrap for this build's cache (hundreds of objects): the
    // runs after it read it compiled, as every run does once the cache holds it.
    for (std::size_t i = 1; i < runs.size(); ++i) {
      INFO(runs[i].dump());
      const json& result = runs[i].at("result");
      REQUIRE(result.is_number_integer());
      CHECK(result.get<long>() <= by_python);
    }
  }
}

namespace {

constexpr const char* kModules =
    "import sys\nAT_IMPORT = sorted(sys.modules)\n\n\ndef modules():\n    return AT_IMPORT\n\n\n"
    "if __name__ == '__main__':\n    print(' '.join(AT_IMPORT))\n";

std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

}  // namespace

// The runner freezes the collector's counts through a gc module of its own (runner/interpreter_session): a
// script finds sys.modules as `python script.py` leaves it, but for `gilhost` and the script itself. 3.9's
// gc is a single-phase module, which the runner imports as before.
TEST_CASE("a script finds sys.modules as python's start-up leaves it", "[e2e][gc_start]") {
  for (const auto& b : e2e::shared_builds()) {
    INFO(b.label);
    Sandbox sb("modules");
    e2e::write_text(sb.dir / "mods.py", kModules);
    const auto plain = e2e::python_script(b, sb, "mods.py");
    REQUIRE(plain.exit_code == 0);
    std::set<std::string> expected = words(plain.out);
    expected.insert({"gilhost", "mods"});
    if (b.label.rfind("3.9.", 0) == 0) expected.insert("gc");
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"mods.py\"\nrepeat = 2\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"m\"\ncall = \"modules\"\n");
    const auto r = sb.gilhost("run x.toml -p " + b.label + " --no-lock -o a.jsonl");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<json> runs = e2e::run_records(sb.dir / "a.jsonl");
    for (const json& run : runs) {
      std::set<std::string> seen;
      for (const json& name : run.at("result")) seen.insert(name.get<std::string>());
      CHECK(seen == expected);
    }
    CHECK(runs.size() == 2);
  }
}
