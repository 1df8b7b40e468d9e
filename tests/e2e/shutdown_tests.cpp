// End to end: what the runner wraps for the run (_thread's starters, to name threads; _imp's module makers on
// a free-threaded build, to name what turns the GIL back on) is put back when the case's outcome is taken. A
// wrapper left there kept the bootstrap's whole namespace alive until Py_FinalizeEx cleared those modules,
// and finalising took ~0.15 ms longer a run than `python` (docs/performance.md). A script's own wrapper over
// ours stays.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

using e2e::Sandbox;
using nlohmann::json;

namespace {

// At exit (atexit runs inside Py_FinalizeEx, after the outcome), each name: "builtin", "ours" (the
// script's own wrapper) or the type of what stands there. The case starts a named thread first, so the
// wrappers were in use.
constexpr const char* kScript = R"PY(import atexit, os, threading, _imp, _thread

REPORT = os.environ["WRAPS_REPORT"]


def _what(owner, attr):
    value = getattr(owner, attr, None)
    if value is None:
        return "absent"
    if getattr(value, "__name__", "") == "mine":
        return "ours"
    return "builtin" if type(value).__name__ == "builtin_function_or_method" else type(value).__name__


def _report():
    with open(REPORT, "w") as f:
        for owner, attr in ((_thread, "start_new_thread"), (_thread, "start_joinable_thread"),
                            (threading, "_start_joinable_thread"), (_imp, "create_dynamic"), (_imp, "create_builtin")):
            f.write("%s.%s %s\n" % (owner.__name__, attr, _what(owner, attr)))


atexit.register(_report)


def named_thread():
    t = threading.Thread(target=lambda: None, name="worker-1")
    t.start()
    t.join()


def replace_starter():
    named_thread()
    original = _thread.start_new_thread

    def mine(*args, **kwargs):
        return original(*args, **kwargs)
    _thread.start_new_thread = mine
)PY";

std::vector<std::string> report_lines(const Sandbox& sb) {
  return gilhost::split(gilhost::trim(e2e::read_text(sb.dir / "report.txt")), '\n');
}

// The run's record (one run) and the report its atexit wrote.
json run_case(const Sandbox& sb, const e2e::SharedBuild& b, const std::string& call) {
  e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"wraps.py\"\nrepeat = 1\nwarmup = 0\n"
                                     "env = { WRAPS_REPORT = \"" + (sb.dir / "report.txt").string() + "\" }\n\n"
                                     "[[case]]\nname = \"c\"\ncall = \"" + call + "\"\n");
  const auto r = sb.gilhost("run x.toml -p " + b.label + " --no-lock -o a.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const json& line : e2e::json_lines(sb.dir / "a.jsonl"))
    if (line.value("type", "") == "run") return line;
  FAIL("no run record");
  return {};
}

}  // namespace

// Each line of the report says "builtin" (or the name is absent from this build).
void check_put_back(const std::vector<std::string>& lines) {
  REQUIRE(lines.size() == 5);
  for (const std::string& line : lines) {
    INFO(line);
    CHECK((line.find(" builtin") != std::string::npos || line.find(" absent") != std::string::npos));
  }
}

TEST_CASE("the runner's wrappers are put back when the case's outcome is taken", "[e2e][shutdown]") {
  for (const auto& b : e2e::shared_builds()) {
    INFO(b.label);
    Sandbox sb("shutdown");
    e2e::write_text(sb.dir / "wraps.py", kScript);
    // Every wrapper put back, after naming the case's thread.
    const json run = run_case(sb, b, "named_thread");
    INFO(run.dump());
    bool named = false;
    for (const json& t : run.at("thread_states").at("threads")) named = named || t.value("name", "") == "worker-1";
    CHECK(named);
    check_put_back(report_lines(sb));
    // A script's own wrapper over ours stays; the rest is put back.
    run_case(sb, b, "replace_starter");
    std::vector<std::string> lines = report_lines(sb);
    REQUIRE_FALSE(lines.empty());
    CHECK(lines.front() == "_thread.start_new_thread ours");
    lines.front() = "_thread.start_new_thread builtin";
    check_put_back(lines);
  }
}

namespace {

// What a script may leave where the runner puts its wrappers back, as the case ends.
constexpr const char* kHostileScript = R"PY(import sys, threading


class Hostile:
    def __getattr__(self, name):
        raise RuntimeError("no attributes here: " + name)


def swap_threading():
    t = threading.Thread(target=lambda: None, name="worker-1")
    t.start()
    t.join()
    sys.modules["threading"] = Hostile()
    return "swapped"


def delete_starter():
    import _thread
    del _thread.start_new_thread
    return "deleted"


def huge_exit():
    sys.exit(2 ** 70)


def hide_thread_module():
    sys.modules["_thread"] = None
    sys.modules["marshal"] = None  # the bootstrap's cold part, which a value JSON cannot hold as it is needs
    return {"hidden": float("nan")}
)PY";

}  // namespace

TEST_CASE("a script that replaced threading or _thread, deleted a starter or exits with a huge code keeps its outcome",
          "[e2e][shutdown][hostile]") {
  for (const auto& b : e2e::shared_builds()) {
    INFO(b.label);
    Sandbox sb("shutdown-hostile");
    e2e::write_text(sb.dir / "h.py", kHostileScript);
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"h.py\"\nrepeat = 1\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"swap\"\ncall = \"swap_threading\"\n\n"
                                       "[[case]]\nname = \"delete\"\ncall = \"delete_starter\"\n\n"
                                       "[[case]]\nname = \"huge\"\ncall = \"huge_exit\"\n\n"
                                       "[[case]]\nname = \"hide\"\ncall = \"hide_thread_module\"\n");
    // As python exits: a SystemExit code no C long holds is status 255.
    const auto plain = gilhost::run_capture({b.executable, "-c", "import sys; sys.exit(2 ** 70)"}, 60);
    const auto r = sb.gilhost("run x.toml -p " + b.label + " --no-lock -o a.jsonl");
    INFO(r.out << r.err);
    int runs = 0;
    for (const json& line : e2e::json_lines(sb.dir / "a.jsonl")) {
      if (line.value("type", "") != "run") continue;
      INFO(line.dump());
      ++runs;
      const std::string name = line.value("case", "");
      if (name == "huge") {
        CHECK(line.value("status", "") == "error");
        CHECK(line.value("exit_code", 0) == plain.exit_code);
        CHECK(line.value("error", json()).is_null());  // the script's exit, not the runner's failure
        continue;
      }
      CHECK(line.value("status", "") == "ok");
      if (name == "hide") CHECK(line.at("result").contains("hidden"));
      else CHECK(line.value("result", "") == (name == "swap" ? "swapped" : "deleted"));
    }
    CHECK(runs == 4);
    CHECK(plain.exit_code == 255);
  }
}
