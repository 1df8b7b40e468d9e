// End to end on a free-threaded build: a GIL an import turns back on is named, a GIL forced on with
// `+gil` is a column of its own, and shared-GIL subinterpreters run there. The build is the one
// `gilhost pythons --json` finds (field free_threaded), never a path written here: CI always has one, so
// its absence is a failure, not a skip.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../unit/helpers.hpp"
#include "results/results_file.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/version.hpp"

namespace fs = std::filesystem;
using gilhost_test::TempDir;
using gilhost_test::write_file;
using nlohmann::json;

namespace {

const std::string kGilhost = GILHOST_BINARY;
const std::string kSource = GILHOST_SOURCE_DIR;

struct FtBuild {
  std::string executable;
  gilhost::Version version;
};

// The newest free-threaded build with a shared libpython (embed mode: subinterpreters need it) that
// gilhost finds; fails the test when there is none.
FtBuild free_threaded_build() {
  static const std::optional<FtBuild> found = []() -> std::optional<FtBuild> {
    auto c = gilhost::run_capture({kGilhost, "pythons", "--json"}, 120);
    auto j = json::parse(c.out, nullptr, false);
    std::optional<FtBuild> best;
    if (!j.is_array()) return best;
    for (const auto& i : j) {
      if (!i.value("supported", false) || !i.value("free_threaded", false) || !i.value("shared", false)) continue;
      auto v = gilhost::Version::parse(i.value("version", ""));
      if (v && (!best || best->version < *v)) best = FtBuild{i.value("executable", ""), *v};
    }
    return best;
  }();
  if (!found)
    FAIL("`gilhost pythons --json` lists no free-threaded build with a shared libpython (CI builds one; "
         "locally, name one: GILHOST_PYTHONS=/path/to/python3.14t)");
  return *found;
}

struct Session {
  gilhost::Captured out;
  std::string results;
  std::vector<json> runs, skips, metas;
  // The run of `c` on the free-threaded build, forced or not.
  const json& find(const std::string& c, bool forced) const {
    for (const auto& r : runs)
      if (r["case"] == c && r.value("free_threaded", false) && r.value("gil_forced", false) == forced) return r;
    FAIL("no run of " << c << (forced ? " on the +gil build" : " on the plain free-threaded build"));
    throw std::logic_error("unreachable");
  }
};

Session run_gilhost(const fs::path& dir, const std::string& config, const std::vector<std::string>& args) {
  Session s;
  s.results = (dir / "results.jsonl").string();
  std::vector<std::string> argv{kGilhost, "run", config, "-o", s.results};
  argv.insert(argv.end(), args.begin(), args.end());
  s.out = gilhost::run_capture(argv, 600);
  if (fs::exists(s.results)) {
    auto set = gilhost::read_results(s.results);
    s.metas = set.metas;
    for (auto& r : set.records) (r["type"] == "skip" ? s.skips : s.runs).push_back(r);
  }
  return s;
}

std::string report(const std::string& results, const std::string& format = "text") {
  auto c = gilhost::run_capture({kGilhost, "report", results, "--format", format}, 60);
  INFO(c.err);
  CHECK(c.exit_code == 0);
  return c.out;
}

// A one-line answer of the build's own python.
std::string ask(const std::string& python, const std::string& code) {
  auto c = gilhost::run_capture({python, "-c", code}, 60);
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  return gilhost::trim(c.out);
}

// A multi-phase init module with no Py_mod_gil slot: importing it turns a free-threaded build's GIL on.
const char* const kNoSlotModule = R"C(#include <Python.h>

static PyObject *answer(PyObject *self, PyObject *unused) { return PyLong_FromLong(42); }

static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static PyModuleDef_Slot slots[] = {{0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "gilhost_noslot", NULL, 0, methods, slots};

PyMODINIT_FUNC PyInit_gilhost_noslot(void) { return PyModuleDef_Init(&def); }
)C";

const char* const kExtScript = R"PY(import sys


def load():
    before = sys._is_gil_enabled()
    import gilhost_noslot
    return {"before": before, "after": sys._is_gil_enabled(), "answer": gilhost_noslot.answer()}


def quiet():
    # The RuntimeWarning filtered out: nothing on stderr, and the host still learns the module's name.
    import warnings
    warnings.simplefilter("ignore")
    import gilhost_noslot
    return sys._is_gil_enabled()


def untouched():
    return sys._is_gil_enabled()


def spin_loaded():
    # The GIL turned on by the import, then 2 threads spin in pure Python: they wait for it.
    import threading, time, warnings
    warnings.simplefilter("ignore")
    import gilhost_noslot
    tids = []

    def work():
        tids.append(threading.get_native_id())
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            pass

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"gil": sys._is_gil_enabled(), "tids": tids}
)PY";

const char* const kExtConfig = R"(# written by tests/e2e/gil_tests.cpp
[experiment]
script = "ext.py"
repeat = 1
warmup = 0
timeout = 120.0

[[case]]
name = "load"
call = "load"

[[case]]
name = "quiet"
call = "quiet"

[[case]]
name = "untouched"
call = "untouched"

[[case]]
name = "spin_loaded"
call = "spin_loaded"
)";

const std::string kWarning = "The global interpreter lock (GIL) has been enabled to load module 'gilhost_noslot'";

}  // namespace

TEST_CASE("an extension without Py_mod_gil: the run records and the report names what turned the GIL on",
          "[e2e][gil]") {
  const FtBuild ft = free_threaded_build();
  TempDir dir;
  // Compiled now, against the free-threaded build's own headers, with its own extension suffix.
  const std::string include = ask(ft.executable, "import sysconfig; print(sysconfig.get_config_var('INCLUDEPY'))");
  const std::string suffix = ask(ft.executable, "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))");
  write_file(dir / "noslot.c", kNoSlotModule);
  auto cc = gilhost::run_capture({"cc", "-shared", "-fPIC", "-I" + include, (dir / "noslot.c").string(), "-o",
                                  (dir / ("gilhost_noslot" + suffix)).string()},
                                 120);
  INFO(cc.out << cc.err);
  REQUIRE(cc.exit_code == 0);
  write_file(dir / "ext.py", kExtScript);
  write_file(dir / "ext.toml", kExtConfig);

  Session s = run_gilhost(dir.path(), (dir / "ext.toml").string(),
                          {"-p", ft.executable, "-p", ft.executable + "+gil", "--no-details"});
  INFO(s.out.out << s.out.err);
  REQUIRE(s.out.exit_code == 0);

  const json& load = s.find("load", false);
  CHECK(load["status"] == "ok");
  CHECK(load["result"] == json({{"before", false}, {"after", true}, {"answer", 42}}));
  CHECK(load["gil_enabled_before"] == false);
  CHECK(load["gil_enabled"] == true);
  CHECK(load["gil_forced"] == false);
  CHECK(load["gil_reenabled_by"] == json::array({"gilhost_noslot"}));
  CHECK(load["stderr"].get<std::string>().find(kWarning) != std::string::npos);

  // With the warning filtered out, the runner still saw the flip: the name does not come from stderr.
  const json& quiet = s.find("quiet", false);
  CHECK(quiet["result"] == true);
  CHECK(quiet["stderr"].get<std::string>().find(kWarning) == std::string::npos);
  CHECK(quiet["gil_reenabled_by"] == json::array({"gilhost_noslot"}));

  const json& untouched = s.find("untouched", false);
  CHECK(untouched["gil_enabled"] == false);
  CHECK(untouched["gil_reenabled_by"] == json::array());
  CHECK(untouched["thread_states"]["gil"] == "none");

  // Turned on during the run, the GIL is located after it: the spinning threads' waits are GIL waits.
  const json& spun = s.find("spin_loaded", false);
  CHECK(spun["result"]["gil"] == true);
  CHECK(spun["thread_states"]["gil"] == "located");
  double gil_ns = 0, lock_ns = 0;
  for (const auto& t : spun["thread_states"]["threads"])
    for (const auto& tid : spun["result"]["tids"])
      if (t["tid"] == tid) {
        CHECK(t["gil_located"] == true);
        gil_ns += t["ns"]["gil"].get<double>();
        lock_ns += t["ns"]["lock"].get<double>();
      }
  INFO("GIL wait " << gil_ns / 1e9 << " s, lock wait " << lock_ns / 1e9 << " s");
  CHECK(gil_ns > 0);
  CHECK(gil_ns > lock_ns);

  // Forced on from the start, the GIL has nothing to be re-enabled by, and CPython does not warn.
  const json& forced = s.find("load", true);
  CHECK(forced["result"] == json({{"before", true}, {"after", true}, {"answer", 42}}));
  CHECK(forced["gil_forced"] == true);
  CHECK(forced["gil_reenabled_by"] == json::array());
  CHECK(forced["stderr"].get<std::string>().find(kWarning) == std::string::npos);

  const std::string text = report(s.results);
  INFO(text);
  CHECK(text.find("GIL re-enabled by gilhost_noslot") != std::string::npos);
  CHECK(text.find("on (forced)") != std::string::npos);
  CHECK(text.find("ON (re-enabled)") == std::string::npos);
  CHECK(report(s.results, "md").find("GIL re-enabled by gilhost_noslot") != std::string::npos);

  // Exec mode runs the same bootstrap in the interpreter itself.
  TempDir exec_dir;
  Session e = run_gilhost(exec_dir.path(), (dir / "ext.toml").string(), {"-p", ft.executable, "--exec"});
  INFO(e.out.out << e.out.err);
  CHECK(e.find("quiet", false)["mode"] == "exec");
  CHECK(e.find("quiet", false)["gil_reenabled_by"] == json::array({"gilhost_noslot"}));
}

TEST_CASE("+gil: the free-threaded build with its GIL forced on is a column of its own", "[e2e][gil]") {
  const FtBuild ft = free_threaded_build();
  const std::string minor = ft.version.minor_str() + "t";
  TempDir dir;
  Session s = run_gilhost(dir.path(), kSource + "/configs/gil_status.toml", {"-p", minor, "-p", minor + "+gil"});
  INFO(s.out.out << s.out.err);
  REQUIRE(s.out.exit_code == 0);  // every expectation of the file held on both
  REQUIRE(s.runs.size() == 4);

  const json& plain = s.find("status", false);
  const json& forced = s.find("status", true);
  CHECK(plain["gil_enabled"] == false);
  CHECK(plain["result"]["gil_enabled"] == false);
  CHECK(plain["result"]["free_threaded"] == true);
  CHECK(forced["gil_enabled"] == true);
  CHECK(forced["result"]["gil_enabled"] == true);
  CHECK(forced["result"]["free_threaded"] == true);
  CHECK(forced["result"]["python_gil_env"] == "1");
  CHECK(forced["executable"] == plain["executable"]);  // the same build
  const std::string label = forced["interpreter"];
  CHECK(label.find("t+gil") != std::string::npos);
  CHECK(label != plain["interpreter"].get<std::string>());
  // Expectations keyed on `gil = true` applied to the forced build only.
  auto applied = [](const json& r, const std::string& what) {
    for (const auto& e : r["expect"])
      if (e["expect"].get<std::string>().find(what) != std::string::npos) return true;
    return false;
  };
  CHECK(applied(forced, "with the GIL"));
  CHECK_FALSE(applied(plain, "with the GIL"));
  CHECK(applied(plain, "without the GIL"));

  // The session's interpreter list has both.
  REQUIRE(s.metas.size() == 1);
  int forced_entries = 0, plain_entries = 0;
  for (const auto& i : s.metas[0]["interpreters"]) (i.value("gil_forced", false) ? forced_entries : plain_entries)++;
  CHECK(forced_entries == 1);
  CHECK(plain_entries == 1);

  const std::string text = report(s.results);
  INFO(text);
  CHECK(text.find(label) != std::string::npos);
  CHECK(text.find("on (forced)") != std::string::npos);
}

TEST_CASE("shared-GIL subinterpreters on a free-threaded build share the GIL it has: none, or a forced one",
          "[e2e][gil]") {
  const FtBuild ft = free_threaded_build();
  TempDir dir;
  write_file(dir / "sub.py", "import sys\n\n\ndef status():\n    return sys._is_gil_enabled()\n");
  write_file(dir / "sub.toml", R"([experiment]
script = "sub.py"
repeat = 1
warmup = 0
timeout = 120.0

[[case]]
name = "shared"
call = "status"
subinterpreters = 2
gil = "shared"

[[case]]
name = "own"
call = "status"
subinterpreters = 2
gil = "own"
)");
  Session s = run_gilhost(dir.path(), (dir / "sub.toml").string(), {"-p", ft.executable, "-p", ft.executable + "+gil"});
  INFO(s.out.out << s.out.err);
  REQUIRE(s.out.exit_code == 0);
  for (const bool forced : {false, true}) {
    INFO((forced ? "+gil" : "plain"));
    const json& shared = s.find("shared", forced);
    CHECK(shared["status"] == "ok");
    CHECK(shared["wall_ns"].get<long long>() > 0);
    CHECK(shared["result"] == json::array({forced, forced}));
    CHECK(shared["gil_enabled"] == forced);
    CHECK(shared["note"].get<std::string>().find("check_multi_interp_extensions=1") != std::string::npos);
    const json& own = s.find("own", forced);
    CHECK(own["status"] == "ok");
    CHECK(own["note"] == "");
  }
  const std::string text = report(s.results);
  INFO(text);
  CHECK(text.find("SubinterpreterError") == std::string::npos);
}
