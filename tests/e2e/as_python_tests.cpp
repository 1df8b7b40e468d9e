// End to end: the runner's interpreter starts and compiles a script as `python script.py` does.
// - Pre-initialised as python is (runner/scoped_interpreter): the C locale coerced to C.UTF-8 (PEP 538),
//   UTF-8 mode in it and under PYTHONUTF8=1 (PEP 540). Py_InitializeEx alone ignored both, and a script
//   saw ASCII file names and streams where python gives UTF-8.
// - Compiled by the C API (runner/script_compiler), not the builtin compile(), whose first call makes
//   the ast module's classes: 1.2-2.2 ms of every run that python does not spend. Both where gilhost
//   compiles the script (main = true) and where the import system does (no bytecode written).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/subprocess.hpp"

using e2e::Sandbox;
using nlohmann::json;

namespace {

constexpr const char* kEncodings =
    "import locale, os, sys\n\n\ndef encodings():\n"
    "    return {'utf8_mode': sys.flags.utf8_mode, 'filesystem': sys.getfilesystemencoding(),\n"
    "            'preferred': locale.getpreferredencoding(False), 'stdout': sys.stdout.encoding,\n"
    "            'lc_ctype': locale.setlocale(locale.LC_CTYPE), 'LC_CTYPE': os.environ.get('LC_CTYPE', '')}\n\n\n"
    "if __name__ == '__main__':\n    import json\n    print(json.dumps(encodings()))\n";

}  // namespace

TEST_CASE("a script finds the locale and its encodings as python sets them up", "[e2e][as_python]") {
  const auto builds = e2e::shared_builds();
  REQUIRE_FALSE(builds.empty());
  // The C locale (coerced unless LC_ALL says otherwise), UTF-8 mode asked for, and a UTF-8 locale.
  const std::vector<std::string> envs = {"-u LC_ALL -u LC_CTYPE LANG=C", "LC_ALL=C", "PYTHONUTF8=1", "LC_ALL=C.UTF-8"};
  for (const auto& b : builds) {
    Sandbox sb("encodings");
    e2e::write_text(sb.dir / "enc.py", kEncodings);
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"enc.py\"\nrepeat = 1\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"e\"\ncall = \"encodings\"\n");
    for (const std::string& env : envs) {
      INFO(b.label << " with env " << env);
      const auto plain = e2e::python_script(b, sb, "enc.py", env);
      INFO(plain.err);
      REQUIRE(plain.exit_code == 0);
      const json expected = json::parse(plain.out);
      const auto r = sb.gilhost_in_env(env, "run x.toml -p " + b.label + " --no-lock -o a.jsonl");
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      const std::vector<json> runs = e2e::run_records(sb.dir / "a.jsonl");
      for (const json& run : runs) CHECK(run.at("result") == expected);
      CHECK(runs.size() == 1);
      std::filesystem::remove(sb.dir / "a.jsonl");
    }
  }
}

namespace {

// Whether the ast module's classes exist as the script's module-level code runs: a builtin compile() of
// anything makes them; python's compiling of its script does not.
constexpr const char* kAst =
    "AST_MADE = any(c.__name__ == 'AST' for c in object.__subclasses__())\n\n\ndef probe():\n    return AST_MADE\n\n\n"
    "if __name__ == '__main__':\n    print('ast classes:', AST_MADE)\n";

}  // namespace

TEST_CASE("a script is compiled as python compiles it: the ast module's classes are not made", "[e2e][as_python]") {
  const auto builds = e2e::shared_builds();
  REQUIRE_FALSE(builds.empty());
  for (const auto& b : builds) {
    INFO(b.label);
    Sandbox sb("compile");
    e2e::write_text(sb.dir / "ast_probe.py", kAst);
    const auto plain = e2e::python_script(b, sb, "ast_probe.py");
    REQUIRE(plain.exit_code == 0);
    // False on most builds; a build whose start-up compiles something (a .pth file's code) says True
    // under python too, and must under gilhost.
    const std::string expected = plain.out;
    REQUIRE((expected == "ast classes: False\n" || expected == "ast classes: True\n"));
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"ast_probe.py\"\nrepeat = 2\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"imported\"\ncall = \"probe\"\n\n"
                                       "[[case]]\nname = \"main\"\nmain = true\n");
    // The first session writes the script's bytecode (its first run compiles); the second writes none, as
    // under PYTHONDONTWRITEBYTECODE or in a read-only folder: every run compiles.
    for (const std::string& env : {std::string("-u PYTHONDONTWRITEBYTECODE"), std::string("PYTHONDONTWRITEBYTECODE=1")}) {
      INFO(env);
      std::filesystem::remove_all(sb.dir / "__pycache__");
      const auto r = sb.gilhost_in_env(env, "run x.toml -p " + b.label + " --no-lock -o a.jsonl");
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      const std::vector<json> runs = e2e::run_records(sb.dir / "a.jsonl");
      for (const json& run : runs) {
        INFO(run.dump());
        if (run.value("case", "") == "imported") CHECK(run.at("result") == (expected == "ast classes: True\n"));
        else CHECK(run.value("stdout", "") == expected);
      }
      CHECK(runs.size() == 4);
      CHECK(std::filesystem::exists(sb.dir / "__pycache__") == (env[0] == '-'));
      std::filesystem::remove(sb.dir / "a.jsonl");
    }
  }
}

namespace {
// Every descriptor below 1024 the script finds open at import (fstat, so that looking opens none), and
// which of them a process it starts would inherit.
constexpr const char* kDescriptors =
    "import fcntl, os\n\n\n"
    "def _open(fd):\n    try:\n        os.fstat(fd)\n        return True\n    except OSError:\n        return False\n\n\n"
    "OPEN = [fd for fd in range(1024) if _open(fd)]\n"
    "INHERITED = [fd for fd in OPEN if not fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC]\n\n\n"
    "def descriptors():\n    return {'open': OPEN, 'inherited': INHERITED}\n\n\n"
    "if __name__ == '__main__':\n    import json\n    print(json.dumps(descriptors()))\n";

json without(json list, int fd) {
  json out = json::array();
  for (const json& v : list)
    if (v != fd) out.push_back(v);
  return out;
}
}  // namespace

TEST_CASE("a script finds the descriptors python would, and the event pipe", "[e2e][as_python]") {
  // Below 1024 (the runner's own copies live above, out of reach of closerange(3, 1024)): what `python
  // script.py` started the same way finds, and the event pipe where scripts knew it (3, close-on-exec),
  // and no other inherited by the processes the case starts. A stray /dev/null of the spawn's used to be
  // both open and inherited.
  const auto builds = e2e::shared_builds();
  REQUIRE_FALSE(builds.empty());
  for (const auto& b : builds) {
    INFO(b.label);
    Sandbox sb("descriptors");
    e2e::write_text(sb.dir / "fds.py", kDescriptors);
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"fds.py\"\nrepeat = 1\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"d\"\ncall = \"descriptors\"\n");
    const auto plain = e2e::python_script(b, sb, "fds.py");
    INFO(plain.out << plain.err);
    REQUIRE(plain.exit_code == 0);
    const json python = json::parse(plain.out);
    json open = without(python.at("open"), 3);
    open.push_back(3);
    std::sort(open.begin(), open.end());
    const auto r = sb.gilhost("run x.toml -p " + b.label + " --no-lock -o a.jsonl");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<json> runs = e2e::run_records(sb.dir / "a.jsonl");
    for (const json& run : runs) {
      INFO(run.dump());
      CHECK(run.at("result").at("open") == open);
      CHECK(run.at("result").at("inherited") == without(python.at("inherited"), 3));
    }
    CHECK(runs.size() == 1);
  }
}

namespace {
// Builds the script `s.py` (its f() returns [V, whether its code's file name is the module's __file__])
// and its bytecode cache as argv[1] says, the same way each time:
// - fresh: a pyc of V = 3 whose header matches the source of V = 1 (same size, the same mtime): the
//   import system trusts the header and runs the pyc's code;
// - stale: the same, the source's mtime moved on: the source is compiled (V = 1);
// - unchecked / checked: hash-based pycs of V = 3 (run as they are / checked against the source);
// - moved: a fresh pyc made in another folder, then moved here with its source: its code's file name
//   is fixed to the new path.
constexpr const char* kMakePyc = R"PY(
import os, py_compile, shutil, sys
mode = sys.argv[1]
def source(v):
    return "import sys\n\ndef f():\n    return [%d, f.__code__.co_filename == __file__]\n" % v
def write(path, v, mtime_ns=None):
    with open(path, "w") as out:
        out.write(source(v))
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
shutil.rmtree("__pycache__", ignore_errors=True)
shutil.rmtree("elsewhere", ignore_errors=True)
if mode == "moved":
    os.mkdir("elsewhere")
    write("elsewhere/s.py", 1)
    py_compile.compile("elsewhere/s.py", doraise=True)
    os.replace("elsewhere/s.py", "s.py")
    os.replace("elsewhere/__pycache__", "__pycache__")
else:
    write("s.py", 3, 1_700_000_000_000_000_000)
    inv = {"unchecked": py_compile.PycInvalidationMode.UNCHECKED_HASH,
           "checked": py_compile.PycInvalidationMode.CHECKED_HASH}.get(mode, py_compile.PycInvalidationMode.TIMESTAMP)
    py_compile.compile("s.py", doraise=True, invalidation_mode=inv)
    write("s.py", 1, 1_700_000_000_000_000_000 if mode != "stale" else 1_700_000_100_000_000_000)
)PY";
}  // namespace

TEST_CASE("a script's bytecode cache is taken, or passed over, as the import system does", "[e2e][as_python]") {
  const auto all = e2e::shared_builds();
  REQUIRE_FALSE(all.empty());
  // The oldest and the newest: the pyc's header and the loader's checks are the same on every build.
  for (const auto& b : {all.front(), all.back()}) {
    Sandbox sb("pyc");
    e2e::write_text(sb.dir / "mkpyc.py", kMakePyc);
    e2e::write_text(sb.dir / "probe.py", "import json, s\nprint(json.dumps(s.f()))\n");
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"s.py\"\nrepeat = 1\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"f\"\ncall = \"f\"\n");
    const std::string env = "PYTHONDONTWRITEBYTECODE=1";  // the cache stays as made
    for (const std::string mode : {"fresh", "stale", "unchecked", "checked", "moved"}) {
      INFO(b.label << ", " << mode);
      REQUIRE(e2e::python_script(b, sb, "mkpyc.py " + mode, env).exit_code == 0);
      const auto plain = e2e::python_script(b, sb, "probe.py", env);
      INFO(plain.err);
      REQUIRE(plain.exit_code == 0);
      const json expected = json::parse(plain.out);
      // What each mode is for: the pyc's code where the import system takes it, the source's where not.
      const int v = mode == "stale" || mode == "checked" || mode == "moved" ? 1 : 3;
      CHECK(expected == json::array({v, true}));
      REQUIRE(e2e::python_script(b, sb, "mkpyc.py " + mode, env).exit_code == 0);
      const auto r = sb.gilhost_in_env(env, "run x.toml -p " + b.label + " --no-lock -o a.jsonl");
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      const std::vector<json> runs = e2e::run_records(sb.dir / "a.jsonl");
      REQUIRE(runs.size() == 1);
      CHECK(runs[0].at("result") == expected);
      std::filesystem::remove(sb.dir / "a.jsonl");
    }
  }
}
