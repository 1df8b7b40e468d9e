// Hostile probes of the event channel and of the run's containment (issue 25, items 1, 2 and 7): each runs
// under a memory and a time limit, and asserts that nothing is lost, nothing crashes, and nothing grows or
// outlives gilhost.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "sandbox.hpp"
#include "run/run_cgroup.hpp"
#include "util/clock.hpp"

using namespace e2e;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// gilhost ARGS in the sandbox as Sandbox::gilhost runs it, under `ulimit -v` of `limit_mb` (none under
// ASan, which reserves terabytes of address space); the runner and the case inherit the limit.
gilhost::Captured limited_gilhost(const Sandbox& sb, const std::string& args, int limit_mb) {
  const std::string limit = kUnderAsan ? "" : "ulimit -v " + std::to_string(limit_mb * 1024) + " && ";
  const std::string cmd = "cd '" + sb.dir.string() + "' && " + limit + "XDG_CACHE_HOME='" + (sb.dir / "cache").string() +
                          "' exec '" + GILHOST_BINARY + "' " + args;
  return gilhost::run_capture({"bash", "-c", cmd}, 600);
}

// The runs of `cases` (call mode, one repeat, in this order) of `script` on `build`, in the embedded and
// the exec modes, each session under `limit_mb` of address space; `slowest_s`: the longer session.
std::vector<std::map<std::string, json>> hostile_runs(const Sandbox& sb, const std::string& build,
                                                      const std::string& script, const std::vector<std::string>& cases,
                                                      int limit_mb, double& slowest_s) {
  write_text(sb.dir / "h.py", script);
  std::string toml = "[experiment]\nname = \"hostile\"\nscript = \"h.py\"\ntimeout = 120\n";
  for (const auto& c : cases) toml += "[[case]]\nname = \"" + c + "\"\ncall = \"" + c + "\"\n";
  write_text(sb.dir / "h.toml", toml);
  std::vector<std::map<std::string, json>> out;
  slowest_s = 0;
  for (const char* mode : {"", " --exec"}) {
    fs::remove(sb.dir / "h.jsonl");
    const std::int64_t t0 = gilhost::monotonic_ns();
    const auto r = limited_gilhost(sb, "run h.toml -p " + build + mode + " --repeat 1 --no-lock -o h.jsonl", limit_mb);
    slowest_s = std::max(slowest_s, static_cast<double>(gilhost::monotonic_ns() - t0) / 1e9);
    INFO(mode << ": " << r.out << r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    std::map<std::string, json> by_case;
    for (const auto& line : json_lines(sb.dir / "h.jsonl"))
      if (line["type"] == "run") by_case[line["case"].get<std::string>()] = line;
    REQUIRE(by_case.size() == cases.size());
    out.push_back(by_case);
  }
  return out;
}

std::string note_of(const json& run) { return run["note"].is_string() ? run["note"].get<std::string>() : ""; }

}  // namespace

TEST_CASE("25.1 a line on the event channel without end is bounded; the session goes on", "[e2e][hostile]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("hostile-channel");
  // 256 MB to fd 3 without a newline, then a case that must still run and be ok. Before the bound gilhost
  // kept the whole line (and rescanned it at every read): 531 MB, and it died under a 450 MB limit.
  const std::string script =
      "import os\n"
      "def flood():\n    b = b'x' * (1 << 20)\n    for _ in range(256):\n        os.write(3, b)\n    return 'flooded'\n"
      "def after():\n    return 'fine'\n";
  double slowest_s = 0;
  for (const auto& runs : hostile_runs(sb, build, script, {"flood", "after"}, 450, slowest_s)) {
    const json& flood = runs.at("flood");
    INFO(flood.dump().substr(0, 2000));
    CHECK(flood["status"] == "error");
    CHECK(note_of(flood).find("bytes without a newline)': a line over the 16 MiB bound on one event, dropped unread") !=
          std::string::npos);
    CHECK(runs.at("after")["status"] == "ok");
    CHECK(runs.at("after")["result"] == "fine");
  }
  // One pass over 256 MB each session (a second or two); the quadratic rescan took 43.6 s.
  CHECK(slowest_s < 60);
}

TEST_CASE("25.2 the token is on no command line, and a forged case event is refused by the host's clocks",
          "[e2e][hostile]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("hostile-channel");
  const std::string script = R"PY(import json, os, re, sys, time
def visible():
    # What any process of the machine can read of the runner: its command line and its environment.
    seen = open('/proc/self/cmdline', 'rb').read() + b'\0' + open('/proc/self/environ', 'rb').read()
    return [m.decode() for m in re.findall(rb'(?<![0-9a-f])[0-9a-f]{24}(?![0-9a-f])', seen)]
def _token():
    # Exec mode: the bootstrap's frame holds it; the runner's modes: its heap, where its events were encoded.
    f = sys._getframe()
    while f is not None:
        if f.f_code.co_name == '_exec_main':
            return f.f_locals['token']
        f = f.f_back
    with open('/proc/self/maps') as maps:
        heaps = [l.split()[0] for l in maps if l.rstrip().endswith('[heap]')]
    found = {}
    with open('/proc/self/mem', 'rb') as mem:
        for h in heaps:
            lo, hi = (int(x, 16) for x in h.split('-'))
            mem.seek(lo)
            for m in re.findall(rb'"token":"([0-9a-f]{24})"', mem.read(hi - lo)):
                found[m] = found.get(m, 0) + 1
    return max(found, key=found.get).decode() if found else ''
def _forge(wall_ns, start_ns, end_ns):
    mode = 'exec' if any(f.f_code.co_name == '_exec_main' for f in _frames()) else 'embed'
    line = {"event": "case", "mode": mode, "start_ns": start_ns, "end_ns": end_ns, "wall_ns": wall_ns,
            "prepare_ns": 0, "cpu": {}, "outcome": {"has_result": True, "result": "FORGED", "exit_code": 0},
            "pid": os.getpid(), "token": _token()}
    fd = 1024 if mode == 'exec' else 3
    try:
        os.fstat(1024)
        fd = 1024
    except OSError:
        pass
    os.write(fd, (json.dumps(line) + '\n').encode())
def _frames():
    f = sys._getframe()
    while f is not None:
        yield f
        f = f.f_back
def forged_short():
    # The issue's probe: 1 us claimed for a case of 2 s, the real case event kept from being sent.
    _forge(1000, 1, 1001)
    time.sleep(2)
    os._exit(0)
def forged_stamped():
    # Stamps that look right (now - 1 us to now): the run still never ends as the runner ends.
    now = time.monotonic_ns()
    _forge(1000, now - 1000, now)
    time.sleep(2)
    os._exit(0)
def after():
    return 'fine'
)PY";
  double slowest_s = 0;
  const auto sessions = hostile_runs(sb, build, script, {"visible", "forged_short", "forged_stamped", "after"}, 2048, slowest_s);
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    const auto& runs = sessions[i];
    INFO((i == 0 ? "embedded" : "exec"));
    CHECK(runs.at("visible")["status"] == "ok");
    CHECK(runs.at("visible")["result"] == json::array());
    const json& short_forge = runs.at("forged_short");
    INFO(short_forge.dump().substr(0, 2000));
    CHECK(short_forge["status"] == "error");
    // Refused by the clocks; or, where the script could not find the token (under AddressSanitizer its
    // allocator keeps no [heap] for the scan), by the token: either way never taken as the result.
    const bool no_token = note_of(short_forge).find("without this run's token") != std::string::npos;
    CHECK((no_token || note_of(short_forge).find("contradicts gilhost's own clock") != std::string::npos));
    if (i == 0) {
      // Embedded: the runner reports its end; a run whose case was reported by a process that then left
      // without it is an error. (Exec mode has no such event: docs/architecture.md, "The event channel".)
      const json& stamped = runs.at("forged_stamped");
      INFO(stamped.dump().substr(0, 2000));
      CHECK(stamped["status"] == "error");
      CHECK((no_token || note_of(stamped).find("the runner never reported its end") != std::string::npos));
    }
    CHECK(runs.at("after")["status"] == "ok");
  }
}

namespace {
// Starts a run whose case leaves a setsid'd grandchild (sleep 60, its pid in gc.pid) and then sleeps,
// sends `sig` to gilhost once the grandchild is there, and prints "GONE <tenths>" when the grandchild is
// gone (or a zombie) within 3 s of gilhost's end, "ALIVE" (and kills it) when it is not.
std::string orphan_probe(const Sandbox& sb, const std::string& build, const std::string& exec_flag, const char* sig) {
  const std::string pidfile = (sb.dir / "gc.pid").string();
  write_text(sb.dir / "o.py",
             "import os, time\n"
             "def orphan():\n"
             "    r, w = os.pipe()\n"
             "    pid = os.fork()\n"
             "    if pid == 0:\n"
             "        os.setsid()\n"
             "        gc = os.fork()\n"
             "        if gc == 0:\n"
             "            os.execvp('sleep', ['sleep', '60'])\n"
             "        os.write(w, str(gc).encode())\n"
             "        os._exit(0)\n"
             "    os.waitpid(pid, 0)\n"
             "    gc = os.read(r, 32).decode()\n"
             "    open('" + pidfile + ".tmp', 'w').write(gc or 'none')\n"
             "    os.rename('" + pidfile + ".tmp', '" + pidfile + "')\n"
             "    time.sleep(60)\n");
  write_text(sb.dir / "o.toml", "[experiment]\nname = \"orphan\"\nscript = \"o.py\"\n[[case]]\nname = \"orphan\"\ncall = \"orphan\"\n");
  fs::remove(pidfile);
  const std::string script =
      "cd '" + sb.dir.string() + "' && export XDG_CACHE_HOME='" + (sb.dir / "cache").string() + "'\n" +
      "'" + GILHOST_BINARY + "' run o.toml -p " + build + exec_flag + " --repeat 1 --no-lock -o o.jsonl >/dev/null 2>&1 &\n"
      "g=$!\n"
      "for i in $(seq 1200); do [ -s gc.pid ] && break; sleep 0.1; done\n"
      "gc=$(cat gc.pid 2>/dev/null)\n"
      "kill -" + sig + " $g; wait $g\n"
      "case \"$gc\" in ''|none) echo NOGRANDCHILD; exit 1;; esac\n"
      "for i in $(seq 30); do\n"
      "  if [ ! -e /proc/$gc ] || grep -q '^State:.*Z' /proc/$gc/status 2>/dev/null; then echo GONE $i; exit 0; fi\n"
      "  sleep 0.1\n"
      "done\n"
      "echo ALIVE; kill -KILL $gc; exit 1\n";
  return gilhost::run_capture({"bash", "-c", script}, 300).out;
}
}  // namespace

TEST_CASE("25.7 nothing a run starts outlives gilhost, killed with SIGKILL or SIGTERM", "[e2e][hostile]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("hostile-orphan");
  if (!gilhost::RunCgroup::session().active()) {
    // Without a cgroup only the process group is killed at gilhost's death: a setsid'd grandchild lives on
    // (docs/architecture.md, "Nothing outlives gilhost").
    WARN("no cgroup v2 to contain runs here: " << gilhost::RunCgroup::session().why_not());
    return;
  }
  for (const char* sig : {"KILL", "TERM"})
    for (const std::string mode : {"", " --exec"}) {
      const std::string out = orphan_probe(sb, build, mode, sig);
      INFO("SIG" << sig << mode << ": " << out);
      CHECK(out.rfind("GONE", 0) == 0);
    }
}
