// End-to-end: the real gilhost binary on real interpreters, checked through the results it records.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../unit/helpers.hpp"
#include "results/results_file.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/version.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kGilhost = GILHOST_BINARY;
const std::string kSource = GILHOST_SOURCE_DIR;

struct Interp {
  std::string label, executable;
  gilhost::Version version;
  bool free_threaded = false;
};

// Every supported build gilhost finds here, GIL and free-threaded (discovery itself is under test too).
const std::vector<Interp>& all_interpreters() {
  static std::vector<Interp> list = [] {
    std::vector<Interp> out;
    auto c = gilhost::run_capture({kGilhost, "pythons", "--json"}, 120);
    auto j = json::parse(c.out, nullptr, false);
    if (!j.is_array()) return out;
    for (const auto& i : j)
      if (i.value("supported", false))
        out.push_back({i.value("label", ""), i.value("executable", ""),
                       gilhost::Version::parse(i.value("version", "")).value_or(gilhost::Version{}),
                       i.value("free_threaded", false)});
    return out;
  }();
  return list;
}

// The GIL builds among them: the tests whose expectations are about the GIL's behaviour.
const std::vector<Interp>& interpreters() {
  static std::vector<Interp> list = [] {
    std::vector<Interp> out;
    for (const auto& i : all_interpreters())
      if (!i.free_threaded) out.push_back(i);
    return out;
  }();
  return list;
}

// The oldest and the newest build: two real interpreters when the machine has them.
std::vector<Interp> two_interpreters() {
  const auto& all = interpreters();
  if (all.size() < 2) return all;
  Interp oldest = all.front(), newest = all.front();
  for (const auto& i : all) {
    if (i.version < oldest.version) oldest = i;
    if (newest.version < i.version) newest = i;
  }
  return {oldest, newest};
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gilhost-e2e-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Session {
  gilhost::Captured out;
  std::vector<json> runs, skips, metas;
  const json* find(const std::string& c, const std::string& interp) const {
    for (const auto& r : runs)
      if (r["case"] == c && r["interpreter"] == interp) return &r;
    return nullptr;
  }
};

Session run_gilhost(const std::string& config, const std::vector<Interp>& interps, std::vector<std::string> extra = {}) {
  TempDir dir;
  const std::string results = (dir.path / "results.jsonl").string();
  std::vector<std::string> argv{kGilhost, "run", config, "-o", results};
  for (const auto& i : interps) {
    argv.push_back("-p");
    argv.push_back(i.executable);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  Session s;
  s.out = gilhost::run_capture(argv, 900);
  if (fs::exists(results)) {
    auto set = gilhost::read_results(results);
    s.metas = set.metas;
    for (auto& r : set.records) (r["type"] == "skip" ? s.skips : s.runs).push_back(r);
  }
  return s;
}

// What basic.py's params_repr returns for basic.toml's `params` case.
const std::string kParamsRepr =
    "[('a', 7), ('astral', 'x\U0001F600y'), ('big', 9223372036854775807), ('empty_list', []), ('empty_table', {}), "
    "('f', 1e+300), ('nan_', nan), ('neg', -9223372036854775808), ('nested', [[1, 2], {'k': 'v'}]), ('ninf', -inf), "
    "('no', False), ('nul', 'a\\x00b'), ('pinf', inf)]";

}  // namespace

TEST_CASE("gilhost finds the machine's Python builds", "[e2e]") {
  INFO("gilhost pythons found " << interpreters().size() << " supported GIL builds");
  REQUIRE(!interpreters().empty());
  auto c = gilhost::run_capture({kGilhost, "pythons"}, 120);
  CHECK(c.exit_code == 0);
  for (const auto& i : interpreters()) CHECK(c.out.find(i.executable) != std::string::npos);
}

TEST_CASE("race.toml: locked never loses; 3.10+ keep plain increments; 3.9 loses them", "[e2e][race]") {
  auto interps = two_interpreters();
  REQUIRE(!interps.empty());
  // A fixed count: no budget (race.toml's cell_budget would stop 3.9's slow locked cell early).
  Session s = run_gilhost(kSource + "/configs/race.toml", interps, {"--quick", "--repeat", "3", "--max-cell-time", "0"});
  INFO(s.out.out << s.out.err);
  REQUIRE(s.out.exit_code == 0);  // every expectation in the file held
  REQUIRE(s.metas.size() == 1);
  CHECK(s.metas[0]["machine"]["cores"].get<int>() >= 1);
  REQUIRE(s.runs.size() == 3 * interps.size() * 3);
  for (const auto& i : interps) {
    int plain_lost_runs = 0;
    for (const auto& r : s.runs) {
      if (r["interpreter"] != i.label) continue;
      CHECK(r["status"] == "ok");
      CHECK(r["python"] == i.version.str());
      CHECK(r["wall_ns"].get<long long>() > 0);
      CHECK(r["rss"]["peak_tree_rss_bytes"].get<long long>() > 1000000);
      CHECK(r["max_rss_kb"].get<long>() > 1000);
      CHECK(r["rss"]["peak_threads"].get<int>() >= 1);
      const json& res = r["result"];
      CHECK(res["expected"] == r["params"]["threads"].get<int>() * r["params"]["n"].get<int>());
      if (r["case"] == "locked") CHECK(res["lost"] == 0);
      if (r["case"] == "plain" && !(i.version < gilhost::Version{3, 10, 0})) CHECK(res["lost"] == 0);
      if (r["case"] == "plain" && res["lost"].get<long>() > 0) ++plain_lost_runs;
    }
    if (i.version < gilhost::Version{3, 10, 0}) CHECK(plain_lost_runs > 0);
  }
  // The terminal table names every interpreter and case.
  for (const auto& i : interps) CHECK(s.out.out.find(i.label) != std::string::npos);
  for (const char* c : {"plain", "call", "locked"}) CHECK(s.out.out.find(c) != std::string::npos);
}

TEST_CASE("http_loops runs gilhost-load, which gilhost names in GILHOST_LOAD_CLIENT", "[e2e][http]") {
  auto interps = two_interpreters();
  REQUIRE(!interps.empty());
  gilhost_test::ScopedEnv unset("GILHOST_LOAD_CLIENT", nullptr);  // the host sets it, not the caller
  Session s = run_gilhost(kSource + "/tests/fixtures/http_client.toml", {interps.back()});
  INFO(s.out.out << s.out.err);
  REQUIRE(s.out.exit_code == 0);
  REQUIRE(s.runs.size() == 1);
  const json& r = s.runs[0]["result"];
  CHECK(r["client"] == "gilhost-load");
  CHECK(r["responses"] == 120);
  const auto per_loop = r["per_loop"].get<std::vector<int>>();
  CHECK(per_loop.size() == 3);
  CHECK(std::accumulate(per_loop.begin(), per_loop.end(), 0) == 120);
  // Both sides' CPU is recorded over the same window, each share at most the usable cores.
  const double cpus = r["cpus"].get<double>();
  for (const char* side : {"server", "client"}) {
    INFO(side);
    CHECK(r[std::string(side) + "_cpu_s"].get<double>() >= 0);
    CHECK(r[std::string(side) + "_cpu_share"].get<double>() >= 0);
    CHECK(r[std::string(side) + "_cpu_share"].get<double>() <= cpus + 0.05);
  }
  CHECK(r["server_cpu_s"].get<double>() > 0);  // 120 requests of Python work
}

TEST_CASE("the host records results, errors, exit codes, output and sys.executable", "[e2e]") {
  auto interps = two_interpreters();
  REQUIRE(!interps.empty());
  Session s = run_gilhost(kSource + "/tests/fixtures/basic.toml", interps);
  INFO(s.out.out << s.out.err);
  CHECK(s.out.exit_code == 0);
  for (const auto& i : interps) {
    const json* echo = s.find("echo", i.label);
    REQUIRE(echo);
    CHECK((*echo)["result"]["b"] == "héllo \"quoted\"");
    // Every kind of TOML value reaches the case as the Python value it is (embed: built with the C API).
    const json* params = s.find("params", i.label);
    REQUIRE(params);
    CHECK((*params)["result"] == kParamsRepr);
    CHECK((*params)["params"]["nan_"] == json({{"$float", "nan"}}));  // the record keeps it, tagged
    CHECK((*echo)["result"]["nested"]["list"] == json::array({1, 2.5, true}));
    CHECK((*echo)["result"]["executable"] == i.executable);
    CHECK((*echo)["result"]["version"] == i.version.str());
    CHECK((*echo)["mode"] == "embed");
    // Every phase of the runner's life is timed, and together they fit in the child's life as the parent saw it.
    long long phases = 0;
    for (const char* phase : {"exec_ns", "load_ns", "init_ns", "bootstrap_ns", "prepare_ns", "wall_ns", "finalize_ns", "exit_ns"}) {
      INFO(phase);
      REQUIRE((*echo)[phase].is_number_integer());
      CHECK((*echo)[phase].get<long long>() > 0);
      phases += (*echo)[phase].get<long long>();
    }
    CHECK(phases <= (*echo)["parent_wall_ns"].get<long long>());
    // Of prepare, the script's import: some of it, never more.
    REQUIRE((*echo)["import_ns"].is_number_integer());
    CHECK((*echo)["import_ns"].get<long long>() > 0);
    CHECK((*echo)["import_ns"].get<long long>() <= (*echo)["prepare_ns"].get<long long>());

    const json* fail = s.find("fail", i.label);
    REQUIRE(fail);
    CHECK((*fail)["status"] == "error");
    CHECK((*fail)["error"]["type"] == "KeyError");
    CHECK((*fail)["exit_code"] == 1);
    CHECK((*fail)["expect_ok"] == true);

    const json* main = s.find("main", i.label);
    REQUIRE(main);
    CHECK((*main)["exit_code"] == 3);
    CHECK((*main)["result"]["name"] == "__main__");
    CHECK((*main)["result"]["argv"] == json::array({"3", "7"}));

    const json* spawn = s.find("spawn", i.label);
    REQUIRE(spawn);
    CHECK((*spawn)["status"] == "ok");
    CHECK((*spawn)["result"]["child"] == i.executable);

    const json* metric = s.find("metric", i.label);
    REQUIRE(metric);
    CHECK((*metric)["metrics"]["answer"] == 42);
    CHECK((*metric)["marks"].size() == 1);

    const json* chatter = s.find("chatter", i.label);
    REQUIRE(chatter);
    CHECK((*chatter)["stdout_bytes"].get<long long>() > 2000000);  // 200,000 lines, all read
    CHECK((*chatter)["stdout"].get<std::string>().size() < 1200000);  // but the kept text is bounded

    const json* sub = s.find("subinterp", i.label);
    if (i.version < gilhost::Version{3, 12, 0}) {
      CHECK(sub == nullptr);
      bool skipped = false;
      for (const auto& k : s.skips)
        skipped |= k.value("case", "") == "subinterp" && k.value("reason", "").find("3.12") != std::string::npos;
      CHECK(skipped);
    } else {
      REQUIRE(sub);
      CHECK((*sub)["status"] == "ok");
      CHECK((*sub)["mode"] == "subinterpreters");
      CHECK((*sub)["result"] == json::array({true, true}));
      CHECK((*sub)["per_interpreter"].size() == 2);
    }
  }
}

TEST_CASE("exec mode runs the interpreter itself with the same measurements", "[e2e]") {
  auto interps = two_interpreters();
  REQUIRE(!interps.empty());
  interps.resize(1);
  Session s = run_gilhost(kSource + "/tests/fixtures/basic.toml", interps, {"--exec"});
  INFO(s.out.out << s.out.err);
  const json* echo = s.find("echo", interps[0].label);
  REQUIRE(echo);
  CHECK((*echo)["mode"] == "exec");
  CHECK((*echo)["wall_from"] == "runner");
  CHECK((*echo)["result"]["a"] == 7);
  CHECK_FALSE(echo->contains("exec_ns"));  // no runner in this child to say when it started
  const json* params = s.find("params", interps[0].label);
  REQUIRE(params);
  CHECK((*params)["result"] == kParamsRepr);  // exec (a compiled literal) and embed see the same values
  const json* fail = s.find("fail", interps[0].label);
  REQUIRE(fail);
  CHECK((*fail)["error"]["type"] == "KeyError");
  // In-process features are skipped with the reason, not attempted.
  bool skipped = false;
  for (const auto& k : s.skips) skipped |= k.value("case", "") == "subinterp";
  CHECK(skipped);
}

TEST_CASE("3.12: many own-GIL subinterpreters created at once, run after run, all succeed", "[e2e][subinterpreters]") {
  // CPython 3.12 crashes when interpreters are created concurrently; the runner serializes creation there
  // (runner/scoped_interpreter). Every interpreter still runs the case at the same time.
  std::vector<Interp> builds;
  for (const auto& i : interpreters())
    if (i.version.major == 3 && i.version.minor == 12) builds.push_back(i);
  if (builds.empty()) {
    WARN("no CPython 3.12 here: nothing to stress");
    return;
  }
  builds.resize(1);
  TempDir work;
  const fs::path config = work.path / "stress.toml";
  constexpr int kInterpreters = 32;
  {
    std::ofstream f(config);
    // No time budget: 6 runs whatever they take (under ASan on a loaded machine, 20 s held 5).
    f << "[experiment]\nscript = \"" << kSource << "/tests/fixtures/subinterp_stress.py\"\nrepeat = 6\ntimeout = 120.0\n"
      << "cell_budget = 0\n\n"
      << "[[case]]\nname = \"many\"\ncall = \"worker\"\nsubinterpreters = " << kInterpreters << "\ngil = \"own\"\n";
  }
  Session s = run_gilhost(config.string(), builds);
  INFO(s.out.out << s.out.err);
  CHECK(s.out.exit_code == 0);
  REQUIRE(s.runs.size() == 6);
  for (const auto& r : s.runs) {
    INFO(r.dump().substr(0, 2000));
    CHECK(r["status"] == "ok");
    CHECK(r["signal"] == 0);
    CHECK(r["result"] == json(std::vector<bool>(kInterpreters, true)));
    CHECK(r["per_interpreter"].size() == kInterpreters);
  }
}

TEST_CASE("timeouts kill the whole tree and crashes are recorded", "[e2e][faults]") {
  auto interps = two_interpreters();
  REQUIRE(!interps.empty());
  interps.resize(1);
  Session s = run_gilhost(kSource + "/tests/fixtures/faults.toml", interps);
  INFO(s.out.out << s.out.err);
  CHECK(s.out.exit_code == 0);  // both faults were expected
  const json* t = s.find("timeout", interps[0].label);
  REQUIRE(t);
  CHECK((*t)["status"] == "timeout");
  CHECK((*t)["parent_wall_ns"].get<long long>() < 10'000'000'000LL);
  CHECK((*t)["rss"]["peak_processes"].get<int>() >= 2);  // the sleeping grandchild was seen
  // Nothing of it survives: no process still runs the sleeper.
  auto ps = gilhost::run_capture({"/bin/sh", "-c", "ps -eo args | grep -c '[t]ime.sleep(600)'"}, 10);
  CHECK(gilhost::trim(ps.out) == "0");
  const json* seg = s.find("segfault", interps[0].label);
  REQUIRE(seg);
  CHECK((*seg)["status"] == "crashed");
  CHECK((*seg)["signal"] == SIGSEGV);
}

namespace {
std::vector<fs::path> bootstrap_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  // The GIL offset cache (gil-*.offset) shares the folder: it is not the bootstrap's.
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() != ".offset") out.push_back(e.path());
  return out;
}
}  // namespace

TEST_CASE("the runner keeps its compiled bootstrap per build, and a bad cache only costs time", "[e2e][cache]") {
  auto interps = two_interpreters();
  REQUIRE(!interps.empty());
  TempDir cache, work;
  gilhost_test::ScopedEnv env("XDG_CACHE_HOME", cache.path.c_str());
  const fs::path config = work.path / "cache.toml";
  {
    std::ofstream f(config);
    f << "[experiment]\nscript = \"" << kSource << "/tests/fixtures/basic.py\"\nrepeat = 2\ntimeout = 60.0\n\n"
      << "[[case]]\nname = \"echo\"\ncall = \"echo\"\nparams = { a = 5 }\n\n"
      << "[[case]]\nname = \"subinterp\"\ncall = \"worker\"\nsubinterpreters = 2\nparams = { seconds = 0.05 }\n";
  }
  const fs::path dir = cache.path / "gilhost" / "bootstrap";
  // Every run of `echo` (and of `subinterp` where it runs) is ok, with the result the script returned;
  // returns the bootstrap_cached flags of the echo runs in order.
  auto check_session = [&](const Session& s, const Interp& i) {
    std::vector<bool> cached;
    for (const auto& r : s.runs) {
      if (r["interpreter"] != i.label) continue;
      CHECK(r["status"] == "ok");
      if (r["case"] == "echo") {
        CHECK(r["result"]["a"] == 5);
        cached.push_back(r.value("bootstrap_cached", false));
      } else {
        CHECK(r["result"] == json::array({true, true}));
      }
    }
    return cached;
  };

  Session first = run_gilhost(config.string(), interps);
  INFO(first.out.out << first.out.err);
  REQUIRE(first.out.exit_code == 0);
  for (const auto& i : interps) {
    INFO(i.label);
    // The first run of a build compiles and writes the cache; every later run loads it.
    CHECK(check_session(first, i) == std::vector<bool>{false, true});
  }
  auto files = bootstrap_files(dir);
  CHECK(files.size() == interps.size());  // one file per build, no temporaries left

  // Cut every cache file short: the runs still succeed, compile again, and mend the file.
  for (const auto& f : files) fs::resize_file(f, fs::file_size(f) / 2);
  Session mended = run_gilhost(config.string(), interps);
  INFO(mended.out.out << mended.out.err);
  CHECK(mended.out.exit_code == 0);
  for (const auto& i : interps) CHECK(check_session(mended, i) == std::vector<bool>{false, true});

  // --no-cache: compiled on every run, nothing read.
  Session uncached = run_gilhost(config.string(), interps, {"--no-cache"});
  CHECK(uncached.out.exit_code == 0);
  for (const auto& i : interps) CHECK(check_session(uncached, i) == std::vector<bool>{false, false});
}

TEST_CASE("check reports every error with file:line:column", "[e2e]") {
  const std::string bad = kSource + "/tests/fixtures/bad.toml";
  auto c = gilhost::run_capture({kGilhost, "check", bad}, 30);
  CHECK(c.exit_code == 2);
  CHECK(c.err.find(bad + ":3:1: error: unknown key 'repaet'") != std::string::npos);
  CHECK(c.err.find(bad + ":8:7: error: gil must be") != std::string::npos);
  auto ok = gilhost::run_capture({kGilhost, "check", kSource + "/configs/race.toml"}, 30);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("every experiment's quick profile holds its expectations on every build found", "[configs]") {
  std::vector<fs::path> configs;
  for (const auto& e : fs::directory_iterator(kSource + "/configs"))
    if (e.path().extension() == ".toml") configs.push_back(e.path());
  std::sort(configs.begin(), configs.end());
  REQUIRE(configs.size() >= 11);
  // The articles' central comparisons are GIL against free-threaded: the suite needs both kinds
  // (.ci/build-pythons makes 3.14.7 and 3.14.7t with `gilhost build`).
  const auto& builds = all_interpreters();
  const bool has_ft = std::any_of(builds.begin(), builds.end(), [](const Interp& i) { return i.free_threaded; });
  INFO("no free-threaded build found: run `bash .ci/build-pythons` (see the README)");
  REQUIRE(has_ft);
  for (const auto& config : configs) {
    DYNAMIC_SECTION(config.stem().string()) {
      Session s = run_gilhost(config.string(), builds, {"--quick", "--no-details"});
      INFO(s.out.out << s.out.err);
      CHECK(s.out.exit_code == 0);
      CHECK(!s.runs.empty());
      for (const auto& r : s.runs) {
        CHECK(r["expect_ok"] == true);
        CHECK(r["leftover_processes"] == 0);
      }
      // Every build found ran (or was skipped for a stated reason) in every experiment.
      for (const auto& i : builds) {
        bool seen = false;
        for (const auto& r : s.runs) seen |= r["interpreter"] == i.label;
        CHECK(seen);
      }
    }
  }
}
