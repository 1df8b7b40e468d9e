// discover: probe output, support rules, labels, selectors, candidate search and the probe cache.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "discover/discover.hpp"
#include "discover/interpreter.hpp"
#include "discover/probe.hpp"
#include "discover/selector.hpp"
#include "helpers.hpp"

using gilhost::Candidate;
using gilhost::Interpreter;
using gilhost::Selection;
using gilhost::Version;
using gilhost_test::ScopedEnv;
using gilhost_test::TempDir;
using gilhost_test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json probe_json(const std::string& version, bool ft, const std::string& libpython,
                const std::string& implementation = "cpython") {
  return {{"gilhost_probe", 1},       {"implementation", implementation}, {"version", version},
          {"release", version},       {"free_threaded", ft},              {"libpython", libpython},
          {"prefix", "/opt/python"},  {"compiler", "gcc -pthread"},       {"build_flags", "'--enable-shared'"}};
}

Interpreter make(const std::string& exe, const std::string& version, bool ft = false,
                 const std::string& implementation = "cpython") {
  Interpreter i;
  REQUIRE(gilhost::parse_probe_output(probe_json(version, ft, "/lib/libpython.so", implementation).dump(), i));
  i.executable = exe;
  i.realpath = exe;
  i.source = "test";
  return i;
}

std::vector<std::string> labels(const std::vector<Interpreter>& list) {
  std::vector<std::string> out;
  for (const auto& i : list) out.push_back(i.label);
  return out;
}

}  // namespace

TEST_CASE("parse_probe_output: a probe answer", "[discover]") {
  Interpreter i;
  REQUIRE(gilhost::parse_probe_output(probe_json("3.12.4", false, "/opt/python/lib/libpython3.12.so.1.0").dump() + "\n", i));
  CHECK(i.implementation == "cpython");
  CHECK(i.version == Version{3, 12, 4});
  CHECK(i.version_full == "3.12.4");
  CHECK_FALSE(i.free_threaded);
  CHECK(i.shared);
  CHECK(i.mode() == "embed");
  CHECK(i.libpython == "/opt/python/lib/libpython3.12.so.1.0");
  CHECK(i.prefix == "/opt/python");
  CHECK(i.compiler == "gcc -pthread");
  CHECK(i.build_flags == "'--enable-shared'");
  CHECK(i.supported);
  CHECK(i.short_label() == "3.12.4");

  Interpreter ft;
  REQUIRE(gilhost::parse_probe_output(probe_json("3.13.1", true, "/x/libpython3.13t.so").dump(), ft));
  CHECK(ft.free_threaded);
  CHECK(ft.short_label() == "3.13.1t");

  // No shared libpython: the build runs in exec mode.
  Interpreter exec;
  REQUIRE(gilhost::parse_probe_output(probe_json("3.11.9", false, "").dump(), exec));
  CHECK_FALSE(exec.shared);
  CHECK(exec.mode() == "exec");
  json no_key = probe_json("3.11.9", false, "");
  no_key.erase("libpython");
  Interpreter exec2;
  REQUIRE(gilhost::parse_probe_output(no_key.dump(), exec2));
  CHECK(exec2.mode() == "exec");
}

TEST_CASE("parse_probe_output: anything else is not a probe answer", "[discover]") {
  Interpreter i;
  CHECK_FALSE(gilhost::parse_probe_output("", i));
  CHECK_FALSE(gilhost::parse_probe_output("Python 3.12.4", i));
  CHECK_FALSE(gilhost::parse_probe_output("{\"gilhost_probe\": 1, \"version\": ", i));
  CHECK_FALSE(gilhost::parse_probe_output("[1, 2, 3]", i));
  CHECK_FALSE(gilhost::parse_probe_output(R"({"implementation": "cpython", "version": "3.12.4"})", i));
  json bad_version = probe_json("3.x", false, "");
  CHECK_FALSE(gilhost::parse_probe_output(bad_version.dump(), i));
  CHECK_FALSE(gilhost::parse_probe_output("warning: something\n" + probe_json("3.12.4", false, "").dump(), i));
}

TEST_CASE("classify_support: CPython 3.9 or newer", "[discover]") {
  Interpreter i = make("/usr/bin/python3.9", "3.9.0");
  CHECK(i.supported);
  CHECK(i.unsupported_reason.empty());

  Interpreter old = make("/usr/bin/python3.8", "3.8.18");
  CHECK_FALSE(old.supported);
  CHECK(old.unsupported_reason == "gilhost needs CPython 3.9 or newer");

  Interpreter pypy = make("/usr/bin/pypy3", "3.10.14", false, "pypy");
  CHECK_FALSE(pypy.supported);
  CHECK(pypy.unsupported_reason == "pypy is not CPython");

  // Re-classifying clears an old verdict.
  old.version = Version{3, 12, 0};
  gilhost::classify_support(old);
  CHECK(old.supported);
  CHECK(old.unsupported_reason.empty());
}

TEST_CASE("assign_labels: unique labels, the path added where versions collide", "[discover]") {
  std::vector<Interpreter> list = {make("/a/python3", "3.12.1"), make("/b/python3", "3.12.1"),
                                   make("/c/python3.13t", "3.13.0", true), make("/c/python3.13", "3.13.0")};
  gilhost::assign_labels(list);
  CHECK(labels(list) == std::vector<std::string>{"3.12.1 (/a/python3)", "3.12.1 (/b/python3)", "3.13.0t", "3.13.0"});
}

TEST_CASE("Interpreter: to_json and from_json round trip", "[discover]") {
  Interpreter i = make("/opt/bin/python3.13t", "3.13.1", true);
  i.label = "3.13.1t";
  Interpreter back = Interpreter::from_json(i.to_json());
  CHECK(back.executable == i.executable);
  CHECK(back.version == i.version);
  CHECK(back.free_threaded);
  CHECK(back.shared);
  CHECK(back.libpython == i.libpython);
  CHECK(back.label == "3.13.1t");
  CHECK(i.to_json()["mode"] == "embed");
}

namespace {

// A machine with a spread of builds, as discovery would list them.
std::vector<Interpreter> machine() {
  std::vector<Interpreter> list = {
      make("/py/3.8/bin/python3", "3.8.10"),      make("/py/3.11/bin/python3", "3.11.9"),
      make("/py/3.12.1/bin/python3", "3.12.1"),   make("/py/3.12.4/bin/python3", "3.12.4"),
      make("/py/3.13/bin/python3", "3.13.1"),     make("/py/3.13t/bin/python3", "3.13.1", true),
      make("/usr/bin/pypy3", "3.10.14", false, "pypy"),
  };
  gilhost::assign_labels(list);
  return list;
}

std::vector<std::string> executables(const Selection& s) {
  std::vector<std::string> out;
  for (const auto& i : s.selected) out.push_back(i.executable);
  return out;
}

Selection select(const std::vector<std::string>& selectors, const gilhost::PathProber& prober = nullptr) {
  return gilhost::select_interpreters(machine(), selectors, prober);
}

const std::string kFound = "found: 3.11.9, 3.12.1, 3.12.4, 3.13.1, 3.13.1t";

}  // namespace

TEST_CASE("select_interpreters: all, with unsupported builds skipped and why", "[discover][selector]") {
  Selection s = select({"all"});
  CHECK(labels(s.selected) == std::vector<std::string>{"3.11.9", "3.12.1", "3.12.4", "3.13.1", "3.13.1t"});
  REQUIRE(s.skipped.size() == 2);
  CHECK(s.skipped[0].selector == "all");
  CHECK(s.skipped[0].label == "3.8.10");
  CHECK(s.skipped[0].reason == "gilhost needs CPython 3.9 or newer");
  CHECK(s.skipped[1].label == "3.10.14");
  CHECK(s.skipped[1].reason == "pypy is not CPython");
}

TEST_CASE("select_interpreters: ft and gil", "[discover][selector]") {
  Selection ft = select({"ft"});
  CHECK(labels(ft.selected) == std::vector<std::string>{"3.13.1t"});
  CHECK(ft.skipped.empty());

  Selection gil = select({"gil"});
  CHECK(labels(gil.selected) == std::vector<std::string>{"3.11.9", "3.12.1", "3.12.4", "3.13.1"});
  CHECK(gil.skipped.empty());

  std::vector<Interpreter> no_ft = {make("/a/python3", "3.12.4")};
  gilhost::assign_labels(no_ft);
  Selection none = gilhost::select_interpreters(no_ft, {"ft"}, nullptr);
  CHECK(none.selected.empty());
  REQUIRE(none.skipped.size() == 1);
  CHECK(none.skipped[0].selector == "ft");
  CHECK(none.skipped[0].reason == "no free-threaded build found");
}

TEST_CASE("select_interpreters: version selectors", "[discover][selector]") {
  SECTION("3.12 picks the newest 3.12.x GIL build") {
    CHECK(executables(select({"3.12"})) == std::vector<std::string>{"/py/3.12.4/bin/python3"});
  }
  SECTION("3.13 is the GIL build, 3.13t only the free-threaded one") {
    CHECK(executables(select({"3.13"})) == std::vector<std::string>{"/py/3.13/bin/python3"});
    CHECK(executables(select({"3.13t"})) == std::vector<std::string>{"/py/3.13t/bin/python3"});
    CHECK(executables(select({"3.13.1t"})) == std::vector<std::string>{"/py/3.13t/bin/python3"});
  }
  SECTION("an exact version") {
    CHECK(executables(select({"3.12.1"})) == std::vector<std::string>{"/py/3.12.1/bin/python3"});
  }
  SECTION("a range takes every supported build in it, free-threaded ones too") {
    CHECK(labels(select({">=3.11"}).selected) ==
          std::vector<std::string>{"3.11.9", "3.12.1", "3.12.4", "3.13.1", "3.13.1t"});
    CHECK(labels(select({">=3.11,<3.13"}).selected) == std::vector<std::string>{"3.11.9", "3.12.1", "3.12.4"});
  }
  SECTION("a build is selected once however many selectors name it") {
    CHECK(labels(select({"3.12", "gil", "3.12.4"}).selected) ==
          std::vector<std::string>{"3.12.4", "3.11.9", "3.12.1", "3.13.1"});
  }
  SECTION("nothing matches: skipped, with what was found") {
    Selection s = select({"3.14", "3.14t"});
    CHECK(s.selected.empty());
    REQUIRE(s.skipped.size() == 2);
    CHECK(s.skipped[0].selector == "3.14");
    CHECK(s.skipped[0].reason == "no build matches 3.14 (" + kFound + ")");
    CHECK(s.skipped[1].reason == "no free-threaded build matches 3.14t (" + kFound + ")");
    // 3.12.2 was never installed.
    CHECK(select({"3.12.2"}).skipped.at(0).reason == "no build matches 3.12.2 (" + kFound + ")");
  }
  SECTION("a match that cannot run says why") {
    Selection s = select({"3.8"});
    CHECK(s.selected.empty());
    REQUIRE(s.skipped.size() == 1);
    CHECK(s.skipped[0].reason == "gilhost needs CPython 3.9 or newer");
    CHECK(select({"3.10"}).skipped.at(0).reason == "pypy is not CPython");
  }
  SECTION("not a selector at all") {
    Selection s = select({"latest"});
    REQUIRE(s.skipped.size() == 1);
    CHECK_THAT(s.skipped[0].reason, Catch::Matchers::StartsWith("not a selector"));
  }
  SECTION("an empty machine") {
    Selection s = gilhost::select_interpreters({}, {"3.12"}, nullptr);
    REQUIRE(s.skipped.size() == 1);
    CHECK(s.skipped[0].reason == "no build matches 3.12 (none found)");
  }
}

TEST_CASE("select_interpreters: path selectors", "[discover][selector]") {
  int probes = 0;
  gilhost::PathProber prober = [&](const std::string& path, std::string& reason) -> std::optional<Interpreter> {
    ++probes;
    if (path == "/venv/bin/python") {
      Interpreter i = make(path, "3.12.7");
      i.label = "3.12.7";
      return i;
    }
    if (path == "/old/bin/python") {
      Interpreter i = make(path, "3.7.17");
      i.label = "3.7.17";
      return i;
    }
    reason = "not found";
    return std::nullopt;
  };

  // A path discovery found is taken from the list, without probing.
  Selection known = select({"/py/3.11/bin/python3"}, prober);
  CHECK(executables(known) == std::vector<std::string>{"/py/3.11/bin/python3"});
  CHECK(probes == 0);

  Selection probed = select({"/venv/bin/python"}, prober);
  CHECK(executables(probed) == std::vector<std::string>{"/venv/bin/python"});
  CHECK(probes == 1);

  Selection missing = select({"/nope/python"}, prober);
  CHECK(missing.selected.empty());
  REQUIRE(missing.skipped.size() == 1);
  CHECK(missing.skipped[0].selector == "/nope/python");
  CHECK(missing.skipped[0].reason == "not found");

  Selection old = select({"/old/bin/python"}, prober);
  REQUIRE(old.skipped.size() == 1);
  CHECK(old.skipped[0].label == "3.7.17");
  CHECK(old.skipped[0].reason == "gilhost needs CPython 3.9 or newer");

  Selection no_prober = select({"/venv/bin/python"});
  REQUIRE(no_prober.skipped.size() == 1);
  CHECK(no_prober.skipped[0].reason == "not a usable Python");
}

TEST_CASE("select_interpreters: a path reaching a found build through a symlink", "[discover][selector]") {
  TempDir tmp;
  write_file(tmp / "real/python3.12", "#!/bin/sh\n", true);
  fs::create_directories(tmp / "link");
  fs::create_symlink(tmp / "real/python3.12", tmp / "link/python");
  std::vector<Interpreter> found = {make((tmp / "real/python3.12").string(), "3.12.4")};
  found[0].realpath = fs::canonical(tmp / "real/python3.12").string();
  gilhost::assign_labels(found);
  bool probed = false;
  Selection s = gilhost::select_interpreters(found, {(tmp / "link/python").string()},
                                             [&](const std::string&, std::string&) -> std::optional<Interpreter> {
                                               probed = true;
                                               return std::nullopt;
                                             });
  CHECK_FALSE(probed);
  CHECK(executables(s) == std::vector<std::string>{(tmp / "real/python3.12").string()});
}

TEST_CASE("select_interpreters: +gil selects free-threaded builds again, with their GIL forced on", "[discover][selector]") {
  SECTION("beside the plain build: same executable, a label and a column of its own") {
    Selection s = select({"3.13t", "3.13t+gil"});
    CHECK(labels(s.selected) == std::vector<std::string>{"3.13.1t", "3.13.1t+gil"});
    CHECK(executables(s) == std::vector<std::string>{"/py/3.13t/bin/python3", "/py/3.13t/bin/python3"});
    CHECK_FALSE(s.selected[0].gil_forced);
    CHECK(s.selected[1].gil_forced);
    CHECK(s.selected[1].free_threaded);
    CHECK(s.skipped.empty());
  }
  SECTION("every form of selector takes it; each build is forced once") {
    CHECK(labels(select({"ft+gil", "3.13.1t+gil", "3.13t+gil", " 3.13t+gil "}).selected) ==
          std::vector<std::string>{"3.13.1t+gil"});
    CHECK(labels(select({"/py/3.13t/bin/python3+gil"}).selected) == std::vector<std::string>{"3.13.1t+gil"});
  }
  SECTION("on a GIL build it is a skip with the reason") {
    Selection s = select({"3.13+gil"});
    CHECK(s.selected.empty());
    REQUIRE(s.skipped.size() == 1);
    CHECK(s.skipped[0].selector == "3.13+gil");
    CHECK(s.skipped[0].label == "3.13.1");
    CHECK_THAT(s.skipped[0].reason, Catch::Matchers::StartsWith("+gil forces the GIL on in a free-threaded build"));
    // A range keeps its free-threaded builds and skips the others.
    Selection range = select({">=3.13+gil"});
    CHECK(labels(range.selected) == std::vector<std::string>{"3.13.1t+gil"});
    REQUIRE(range.skipped.size() == 1);
    CHECK(range.skipped[0].label == "3.13.1");
  }
  SECTION("nothing matches: skipped under the selector as written") {
    Selection s = select({"3.14t+gil"});
    REQUIRE(s.skipped.size() == 1);
    CHECK(s.skipped[0].selector == "3.14t+gil");
    CHECK(s.skipped[0].reason == "no free-threaded build matches 3.14t (" + kFound + ")");
  }
  SECTION("a probed path keeps its path in the label") {
    gilhost::PathProber prober = [](const std::string& path, std::string&) -> std::optional<Interpreter> {
      Interpreter i = make(path, "3.14.0", true);
      i.label = i.short_label() + " (" + path + ")";
      return i;
    };
    Selection s = select({"/x/python3.14t", "/x/python3.14t+gil"}, prober);
    CHECK(labels(s.selected) == std::vector<std::string>{"3.14.0t (/x/python3.14t)", "3.14.0t+gil (/x/python3.14t)"});
  }
}

TEST_CASE("strip_gil_suffix and with_gil_forced", "[discover][selector]") {
  std::string s = "3.14t+gil";
  CHECK(gilhost::strip_gil_suffix(s));
  CHECK(s == "3.14t");
  CHECK_FALSE(gilhost::strip_gil_suffix(s));
  CHECK(s == "3.14t");
  std::string bare = "+gil";  // nothing to force
  CHECK_FALSE(gilhost::strip_gil_suffix(bare));

  Interpreter i = make("/py/3.14t/bin/python3", "3.14.7", true);
  i.label = "3.14.7t";
  Interpreter forced = gilhost::with_gil_forced(i);
  CHECK(forced.label == "3.14.7t+gil");
  CHECK(forced.short_label() == "3.14.7t+gil");
  CHECK(gilhost::with_gil_forced(forced).label == "3.14.7t+gil");
  Interpreter back = Interpreter::from_json(forced.to_json());
  CHECK(back.gil_forced);
  CHECK(back.label == "3.14.7t+gil");
  CHECK_FALSE(Interpreter::from_json(i.to_json()).gil_forced);
}

namespace {
std::vector<std::string> candidate_list(const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(c.source + " " + c.executable);
  return out;
}
}  // namespace

TEST_CASE("find_candidates: pyenv versions, PATH names, shims skipped, symlinks deduplicated", "[discover]") {
  ScopedEnv no_extra("GILHOST_PYTHONS", nullptr);
  TempDir tmp;
  const fs::path root = tmp.path();
  const std::string sh = "#!/bin/sh\nexit 0\n";
  write_file(root / "pyenv/versions/3.11.9/bin/python3", sh, true);
  write_file(root / "pyenv/versions/3.12.4/bin/python3", sh, true);
  write_file(root / "pyenv/versions/3.12.4/bin/python", sh, true);  // python3 is preferred
  write_file(root / "pyenv/versions/3.13.1t/bin/python", sh, true);  // only `python`
  fs::create_directories(root / "pyenv/versions/broken");
  write_file(root / "pyenv/versions/noexec/bin/python3", sh, false);
  write_file(root / "pyenv/shims/python3", sh, true);
  write_file(root / "bin/python3.12", sh, true);
  write_file(root / "bin/python3.13t", sh, true);
  write_file(root / "bin/pythonx", sh, true);
  write_file(root / "bin/python3.12-config", sh, true);
  write_file(root / "bin/python", sh, false);  // not executable
  fs::create_symlink(root / "pyenv/versions/3.11.9/bin/python3", root / "bin/python3");
  fs::create_directories(root / "other");
  fs::create_symlink(root / "bin/python3.12", root / "other/python3.12");
  write_file(root / "explicit/python", sh, true);
  write_file(root / "data/gilhost/pythons/3.14.7t/bin/python3", sh, true);

  gilhost::DiscoverOptions o;
  o.use_uv = false;
  o.builds_dir = (root / "data/gilhost/pythons").string();
  o.pyenv_root = (root / "pyenv").string();
  o.path_env = (root / "pyenv/shims").string() + ":" + (root / "bin").string() + "::" + (root / "other").string() +
               ":" + (root / "does-not-exist").string();
  o.explicit_paths = {(root / "explicit/python").string(), (root / "pyenv/versions/3.12.4/bin/python3").string()};

  const std::string r = root.string();
  CHECK(candidate_list(gilhost::find_candidates(o)) ==
        std::vector<std::string>{
            "explicit " + r + "/explicit/python",
            "explicit " + r + "/pyenv/versions/3.12.4/bin/python3",
            "gilhost build " + r + "/data/gilhost/pythons/3.14.7t/bin/python3",
            "pyenv " + r + "/pyenv/versions/3.11.9/bin/python3",
            "pyenv " + r + "/pyenv/versions/3.13.1t/bin/python",
            "PATH " + r + "/bin/python3.12",
            "PATH " + r + "/bin/python3.13t",
        });

  // $GILHOST_PYTHONS adds explicit paths too; uv's folder has pyenv's layout.
  write_file(root / "uv/cpython-3.14.0-linux/bin/python3", sh, true);
  ScopedEnv extra("GILHOST_PYTHONS", (r + "/bin/pythonx:").c_str());
  gilhost::DiscoverOptions o2;
  o2.use_path = false;
  o2.use_pyenv = false;
  o2.use_gilhost_builds = false;
  o2.uv_dir = (root / "uv").string();
  CHECK(candidate_list(gilhost::find_candidates(o2)) ==
        std::vector<std::string>{"explicit " + r + "/bin/pythonx", "uv " + r + "/uv/cpython-3.14.0-linux/bin/python3"});
}

namespace {

// A shell script that answers the probe like a Python build would, and logs each run to `log`.
void fake_python(const fs::path& path, const json& answer, const fs::path& log) {
  std::ostringstream s;
  s << "#!/bin/sh\n"
    << "echo \"$1 $2\" >> '" << log.string() << "'\n"
    << "cat <<'JSON'\n"
    << answer.dump() << "\n"
    << "JSON\n";
  write_file(path, s.str(), true);
}

int count_lines(const fs::path& p) {
  std::string text = gilhost_test::slurp(p);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("ProbeCache: probes once, then answers from the cache", "[discover][probe]") {
  TempDir tmp;
  const fs::path log = tmp / "runs.log";
  const fs::path exe = tmp / "bin/python3";
  fake_python(exe, probe_json("3.12.4", false, "/opt/lib/libpython3.12.so"), log);
  const std::string cache_path = (tmp / "cache/gilhost/interpreters.json").string();

  std::string error;
  {
    gilhost::ProbeCache cache(cache_path);
    auto first = cache.probe(exe.string(), "PATH", error);
    REQUIRE(first);
    CHECK(error.empty());
    CHECK(first->version == Version{3, 12, 4});
    CHECK(first->executable == exe.string());
    CHECK(first->realpath == fs::canonical(exe).string());
    CHECK(first->source == "PATH");
    CHECK(first->mode() == "embed");
    CHECK(count_lines(log) == 1);
    CHECK(gilhost_test::slurp(log) == "-I -c\n");  // run isolated, with the probe program

    auto second = cache.probe(exe.string(), "pyenv", error);
    REQUIRE(second);
    CHECK(count_lines(log) == 1);  // from the cache
    CHECK(second->version == Version{3, 12, 4});
    CHECK(second->source == "pyenv");  // the caller's, not the cached one
    cache.save();
  }
  REQUIRE(fs::exists(cache_path));

  // A new cache reads the saved file.
  {
    gilhost::ProbeCache cache(cache_path);
    auto again = cache.probe(exe.string(), "PATH", error);
    REQUIRE(again);
    CHECK(again->libpython == "/opt/lib/libpython3.12.so");
    CHECK(count_lines(log) == 1);

    // A changed executable (another size and mtime) is probed afresh.
    fake_python(exe, probe_json("3.12.5", false, ""), log);
    auto changed = cache.probe(exe.string(), "PATH", error);
    REQUIRE(changed);
    CHECK(changed->version == Version{3, 12, 5});
    CHECK(changed->mode() == "exec");
    CHECK(count_lines(log) == 2);
  }

  // Disabled: every probe runs the executable.
  gilhost::ProbeCache off(cache_path, false);
  REQUIRE(off.probe(exe.string(), "PATH", error));
  REQUIRE(off.probe(exe.string(), "PATH", error));
  CHECK(count_lines(log) == 4);
}

TEST_CASE("ProbeCache: what is not a usable Python", "[discover][probe]") {
  TempDir tmp;
  gilhost::ProbeCache cache((tmp / "cache.json").string());
  std::string error;

  CHECK_FALSE(cache.probe((tmp / "missing/python3").string(), "PATH", error));
  CHECK(error == "not found");

  write_file(tmp / "plain", "#!/bin/sh\n", false);
  CHECK_FALSE(cache.probe((tmp / "plain").string(), "PATH", error));
  CHECK(error == "not executable");

  write_file(tmp / "garbage", "#!/bin/sh\necho 'Python 3.12.4'\n", true);
  CHECK_FALSE(cache.probe((tmp / "garbage").string(), "PATH", error));
  CHECK(error == "the probe failed (exit 0)");

  write_file(tmp / "failing", "#!/bin/sh\necho 'boom: no encodings module' >&2\necho second line >&2\nexit 3\n", true);
  CHECK_FALSE(cache.probe((tmp / "failing").string(), "PATH", error));
  CHECK(error == "the probe failed (exit 3: boom: no encodings module)");
}

TEST_CASE("discover: fake builds found, probed, sorted and labelled", "[discover][probe]") {
  ScopedEnv no_extra("GILHOST_PYTHONS", nullptr);
  TempDir tmp;
  const fs::path log = tmp / "runs.log";
  fake_python(tmp / "pyenv/versions/a/bin/python3", probe_json("3.13.1", true, ""), log);
  fake_python(tmp / "pyenv/versions/b/bin/python3", probe_json("3.12.4", false, "/l.so"), log);
  fake_python(tmp / "pyenv/versions/c/bin/python3", probe_json("3.13.1", false, "/l.so"), log);
  fake_python(tmp / "bin/python3.12", probe_json("3.12.4", false, "/l.so"), log);
  write_file(tmp / "bin/python3", "#!/bin/sh\nexit 1\n", true);

  gilhost::DiscoverOptions o;
  o.use_uv = false;
  o.use_gilhost_builds = false;
  o.pyenv_root = (tmp / "pyenv").string();
  o.path_env = (tmp / "bin").string();
  gilhost::ProbeCache cache((tmp / "cache.json").string());
  gilhost::Discovery d = gilhost::discover(o, cache);

  const std::string b = (tmp / "pyenv/versions/b/bin/python3").string();
  const std::string p = (tmp / "bin/python3.12").string();
  CHECK(labels(d.found) ==
        std::vector<std::string>{"3.12.4 (" + b + ")", "3.12.4 (" + p + ")", "3.13.1", "3.13.1t"});
  REQUIRE(d.problems.size() == 1);
  CHECK(d.problems[0].executable == (tmp / "bin/python3").string());
  CHECK(d.problems[0].reason == "the probe failed (exit 1)");
  CHECK(fs::exists(tmp / "cache.json"));  // saved
  CHECK(count_lines(log) == 4);
}

TEST_CASE("select_interpreters: a selector that picks no build is unmatched; all and +gil on a GIL build are not",
          "[discover][selector][answer-check]") {
  const Selection s = select({"3.12", "pypy", "3.99", "all+gil", "3.12+gil"});
  CHECK(executables(s) == std::vector<std::string>{"/py/3.12.4/bin/python3", "/py/3.13t/bin/python3"});
  REQUIRE(s.unmatched.size() == 2);
  CHECK(s.unmatched[0].selector == "pypy");
  CHECK(s.unmatched[0].reason.find(kFound) != std::string::npos);
  CHECK(s.unmatched[1].selector == "3.99");
  CHECK(s.unmatched[1].reason.find("no build matches 3.99") != std::string::npos);
  CHECK(select({"3.13t", "gil"}).unmatched.empty());
  CHECK(select({"ft+gil"}).unmatched.empty());
}
