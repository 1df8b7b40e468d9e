// Issue 26, plain answers: the right error before the lock, check of a script, run's name check (1), timeit's
// own figure compared (2), Python thread names (6), --param over a sweep and `pythons` at 80 columns (8).
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"

namespace fs = std::filesystem;
using e2e::json_lines;
using e2e::has;
using e2e::Sandbox;
using e2e::write_text;
using nlohmann::json;

namespace {


// The labels of the usable builds gilhost finds.
std::vector<std::string> usable_labels() {
  std::vector<std::string> out;
  const auto c = gilhost::run_capture({GILHOST_BINARY, "pythons", "--json"}, 300);
  const json list = json::parse(c.out, nullptr, false);
  if (list.is_array())
    for (const auto& i : list)
      if (i.value("supported", false)) out.push_back(i.value("label", ""));
  return out;
}

// The runs of a results file.
std::vector<json> runs_of(const fs::path& file) {
  std::vector<json> out;
  for (auto& line : json_lines(file))
    if (line.value("type", "") == "run") out.push_back(std::move(line));
  return out;
}

}  // namespace

TEST_CASE("run -p 3.99 lists every usable build, and says so before waiting for the lock", "[e2e][answers26]") {
  const auto labels = usable_labels();
  REQUIRE_FALSE(labels.size() < 2);  // the machine has what the test needs
  Sandbox sb("answers26");
  write_text(sb.dir / "one.py", "print(1)\n");
  fs::create_directories(sb.dir / "cache" / "gilhost");
  // Another session holds the lock for 60 s; the selector's error must not wait for it.
  const std::string cmd =
      "cd '" + sb.dir.string() + "' && { python3 -c 'import fcntl, sys, time; f = open(sys.argv[1], \"w\"); "
      "fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' cache/gilhost/session.lock >/dev/null 2>&1 & }; holder=$!; sleep 1; "
      "XDG_CACHE_HOME='" + (sb.dir / "cache").string() + "' timeout 30 '" + GILHOST_BINARY + "' run one.py -p 3.99; "
      "rc=$?; kill $holder; exit $rc";
  const auto r = gilhost::run_capture({"bash", "-c", cmd}, 120);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "3.99"));
  CHECK_FALSE(has(r.err, "waiting for the session"));
  for (const auto& l : labels) CHECK(has(r.err, l));
}

TEST_CASE("check one.py compiles the script on each build, as run would run it", "[e2e][answers26]") {
  const std::string build = e2e::embeddable_build();
  REQUIRE_FALSE(build.empty());  // the machine has what the test needs
  Sandbox sb("answers26");
  write_text(sb.dir / "one.py", "import sys\nx = 1\nprint(x)\n");
  const auto good = sb.gilhost("check one.py -p " + build);
  INFO(good.out << good.err);
  CHECK(good.exit_code == 0);
  CHECK(has(good.out, "one.py: ok"));
  CHECK_FALSE(has(good.err, "expected '='"));
  write_text(sb.dir / "bad.py", "x = 1\ndef f(:\n  pass\n");
  const auto bad = sb.gilhost("check bad.py -p " + build);
  INFO(bad.out << bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "bad.py:2:"));
  CHECK(has(bad.err, "SyntaxError"));
}

TEST_CASE("run checks call and setup names before it runs, located as check says it", "[e2e][answers26]") {
  const std::string build = e2e::embeddable_build();
  REQUIRE_FALSE(build.empty());  // the machine has what the test needs
  Sandbox sb("answers26");
  write_text(sb.dir / "work.py", "def real():\n    return 1\n");
  write_text(sb.dir / "x.toml",
             "[experiment]\nname = \"x\"\nscript = \"work.py\"\n\n[[case]]\nname = \"one\"\ncall = \"nope\"\n");
  const auto r = sb.gilhost("run x.toml -p " + build + " --repeat 1 --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "x.toml:7:"));
  CHECK(has(r.err, "has no top-level function 'nope' (functions: real)"));
  CHECK_FALSE(fs::exists(sb.dir / "r.jsonl"));
}

TEST_CASE("-m timeit compares timeit's own time per loop, not its wall time", "[e2e][answers26]") {
  // Two GIL builds that run embedded: the newest two.
  std::vector<std::string> gil;
  const auto c = gilhost::run_capture({GILHOST_BINARY, "pythons", "--json"}, 300);
  const json list = json::parse(c.out, nullptr, false);
  if (list.is_array())
    for (const auto& i : list)
      if (i.value("supported", false) && !i.value("free_threaded", false) && i.value("shared", false) &&
          i.value("label", "").find('(') == std::string::npos)
        gil.push_back(i.value("label", ""));
  REQUIRE_FALSE(gil.size() < 2);  // the machine has what the test needs
  const std::string a = gil[gil.size() - 2], b = gil.back();
  Sandbox sb("answers26");
  const auto r = sb.gilhost("run -m timeit -p " + a + " -p " + b +
                            " --repeat 2 --no-lock -o r.jsonl -- -s 'x = list(range(2000))' 'sum(x)'");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "compared: timeit's time per loop"));
  // Each run's figure is timeit's own: seconds per loop, far below the run's wall time.
  const auto runs = runs_of(sb.dir / "r.jsonl");
  REQUIRE(runs.size() >= 4);
  for (const auto& run : runs) {
    INFO(run.dump());
    REQUIRE(run["metrics"].contains("timeit_s_per_loop"));
    const double per_loop = run["metrics"]["timeit_s_per_loop"].get<double>();
    CHECK(per_loop > 0);
    CHECK(per_loop * 1e9 < static_cast<double>(run["wall_ns"].get<std::int64_t>()) / 10);
  }
  // The vs column is the ratio of the per-loop figures (paired by repeat), not of the wall times.
  const auto j = sb.gilhost("report r.jsonl --baseline-python " + a + " -f json");
  INFO(j.out << j.err);
  const json cells = json::parse(j.out, nullptr, false);
  bool seen = false;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_object() && v.contains("vs_baseline_python") && v["vs_baseline_python"].is_object() &&
        v.value("interpreter", "") == b) {
      std::vector<double> ratios;
      for (int k = 0; k < 2; ++k) {
        double num = 0, den = 0;
        for (const auto& run : runs)
          if (run.value("repeat", -1) == k && !run.value("warmup", false))
            (run["interpreter"] == b ? num : den) = run["metrics"]["timeit_s_per_loop"].get<double>();
        if (num > 0 && den > 0) ratios.push_back(num / den);
      }
      REQUIRE(ratios.size() == 2);
      const double median = (ratios[0] + ratios[1]) / 2;
      CHECK(v["vs_baseline_python"]["value"].get<double>() == Approx(median).epsilon(1e-6));
      seen = true;
    }
    if (v.is_object() || v.is_array())
      for (const auto& x : v) walk(x);
  };
  walk(cells);
  CHECK(seen);
}

TEST_CASE("-m pyperf warns that its own loop counts make the wall time meaningless", "[e2e][answers26]") {
  Sandbox sb("answers26");
  const auto r = sb.gilhost("run -m pyperf --dry-run -p all");
  INFO(r.out << r.err);
  CHECK(has(r.err, "chooses its own loop counts"));
}

TEST_CASE("threads carry their Python names, and the main thread is marked", "[e2e][answers26]") {
  // A build before 3.14, where /proc names every thread after the runner.
  std::string old;
  for (const auto& l : usable_labels())
    if (l.rfind("3.1", 0) == 0 && l.rfind("3.14", 0) != 0 && l.find('(') == std::string::npos && l.back() != 't') old = l;
  REQUIRE_FALSE(old.empty());  // the machine has what the test needs
  Sandbox sb("answers26");
  write_text(sb.dir / "named.py",
             "import threading, time\n"
             "def spin(seconds):\n    end = time.time() + seconds\n    while time.time() < end: pass\n"
             "short = threading.Thread(target=spin, args=(0.01,), name='short-lived')\n"
             "short.start(); short.join()\n"
             "ts = [threading.Thread(target=spin, args=(0.4,), name='worker-%d' % i) for i in range(2)]\n"
             "for t in ts: t.start()\n"
             "for t in ts: t.join()\n");
  const auto r = sb.gilhost("run named.py -p " + old + " --repeat 1 --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto runs = runs_of(sb.dir / "r.jsonl");
  REQUIRE(!runs.empty());
  const json& threads = runs.back()["thread_states"]["threads"];
  INFO(threads.dump());
  int workers = 0, mains = 0;
  for (const auto& t : threads) {
    const std::string name = t.value("name", "");
    workers += name == "worker-0" || name == "worker-1";
    if (t.value("main", false)) {
      ++mains;
      CHECK(name == "MainThread");
    }
    CHECK(name != "gilhost-runner");
  }
  CHECK(workers == 2);
  CHECK(mains == 1);
  const auto trace = sb.gilhost("report r.jsonl -f trace");
  CHECK(has(trace.out, "MainThread (main)"));
  CHECK(has(trace.out, "worker-1"));
}

TEST_CASE("--param over a swept key runs the case once, named by the value", "[e2e][answers26]") {
  const std::string build = e2e::embeddable_build();
  REQUIRE_FALSE(build.empty());  // the machine has what the test needs
  Sandbox sb("answers26");
  write_text(sb.dir / "work.py", "def run(n):\n    return n\n");
  write_text(sb.dir / "x.toml",
             "[experiment]\nname = \"x\"\nscript = \"work.py\"\n\n"
             "[[case]]\nname = \"count\"\ncall = \"run\"\nsweep = { n = [10, 1000] }\n");
  const auto r = sb.gilhost("run x.toml -p " + build + " --param n=100 --repeat 1 --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto runs = runs_of(sb.dir / "r.jsonl");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["case"] == "count[n=100]");
  CHECK(runs[0]["result"] == 100);
}
