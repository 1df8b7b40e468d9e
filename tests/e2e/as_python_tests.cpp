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
