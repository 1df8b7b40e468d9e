// End-to-end, everyday use: a script measured with no TOML file, --case and --param, and two sessions
// started together (they keep their results apart, and the second waits for the first to measure).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kGilhost = GILHOST_BINARY;
const std::string kSource = GILHOST_SOURCE_DIR;

using e2e::Sandbox;
using e2e::embeddable_build;
using e2e::json_lines;


// Writes the experiment `toml` to NAME.toml in the sandbox, runs it once on `build` into NAME.jsonl, checks
// gilhost's exit status, and returns the file's lines (the meta line first).
std::vector<json> run_file_once(const Sandbox& sb, const std::string& name, const std::string& toml,
                                const std::string& build, int exit_code) {
  std::ofstream(sb.dir / (name + ".toml")) << toml;
  const auto r = sb.gilhost("run " + name + ".toml -p " + build + " --repeat 1 -o " + name + ".jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code == exit_code);
  return json_lines(sb.dir / (name + ".jsonl"));
}

}  // namespace

TEST_CASE("a script with its arguments, two sessions at once: apart, one after the other", "[e2e][everyday]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("everyday");
  {
    std::ofstream(sb.dir / "bench.py") << "import sys, time\ntime.sleep(0.5)\nprint('argv', sys.argv[1:])\n";
  }
  const std::string args = "run bench.py -p " + build + " --repeat 2 -- --size 'two words'";
  gilhost::Captured a, b;
  std::thread first([&] { a = sb.gilhost(args); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::thread second([&] { b = sb.gilhost(args); });
  first.join();
  second.join();
  INFO(a.out << a.err << b.out << b.err);
  CHECK(a.exit_code == 0);
  CHECK(b.exit_code == 0);
  // The second one waited for the first (the session lock), and said for whom.
  CHECK((a.err + b.err).find("waiting for the session measuring now to end: pid ") != std::string::npos);

  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(sb.dir / "results")) files.push_back(e.path());
  REQUIRE(files.size() == 2);  // started in the same second, written apart
  for (const auto& f : files) {
    const auto lines = json_lines(f);
    REQUIRE(lines.size() == 3);  // meta + 2 runs
    CHECK(lines[0]["type"] == "meta");
    CHECK(lines[0]["experiment"]["cases"][0]["mode"] == "main");
    CHECK(lines[0]["system"]["load_avg"].size() == 3);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      CHECK(lines[i]["case"] == "bench");
      CHECK(lines[i]["status"] == "ok");
      CHECK(lines[i]["stdout"].get<std::string>().find("argv ['--size', 'two words']") != std::string::npos);
      CHECK(lines[i]["wall_ns"].get<long long>() >= 500000000);
    }
  }
  // Arguments after -- belong to a script only.
  const auto wrong = sb.gilhost("run '" + kSource + "/configs/race.toml' -p " + build + " -- x");
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("arguments after -- are for a script") != std::string::npos);
}

TEST_CASE("--case and --param pick cases and override params, recorded in the meta", "[e2e][everyday]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("everyday");
  const auto c = sb.gilhost("run '" + kSource + "/configs/race.toml' --quick -p " + build +
                            " --case 'pl*' --param threads=2 --param n=1000 -o r.jsonl --no-lock");
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  const auto lines = json_lines(sb.dir / "r.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["experiment"]["case_globs"] == json::array({"pl*"}));
  CHECK(lines[0]["experiment"]["param_overrides"] == json({{"threads", 2}, {"n", 1000}}));
  CHECK(lines[1]["case"] == "plain");
  CHECK(lines[1]["params"]["threads"] == 2);
  CHECK(lines[1]["result"]["counter"].get<long long>() + lines[1]["result"]["lost"].get<long long>() == 2000);

  // A glob that matches nothing names the cases there are.
  const auto none = sb.gilhost("run '" + kSource + "/configs/race.toml' -p " + build + " --case nothing");
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--case 'nothing' matches no case (its cases: plain, call, locked)") != std::string::npos);
  // -o to a file that holds a session appends, and says so.
  const auto again = sb.gilhost("run '" + kSource + "/configs/race.toml' --quick -p " + build +
                                " --case plain -o r.jsonl --no-lock");
  CHECK(again.exit_code == 0);
  CHECK(again.err.find("appending this session to r.jsonl") != std::string::npos);
  const auto all = json_lines(sb.dir / "r.jsonl");
  REQUIRE(all.size() == 4);
  CHECK(all[2]["appended_to_existing"] == true);
}

TEST_CASE("-m module runs as python -m runs it; a TOML names modules too", "[e2e][everyday]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("everyday");
  fs::create_directories(sb.dir / "pkg");
  std::ofstream(sb.dir / "pkg" / "__init__.py") << "def double(n):\n    return 2 * n\n";
  std::ofstream(sb.dir / "pkg" / "__main__.py")
      << "import sys\nprint('main', __name__, __spec__.name, __package__, sys.argv[1:], sys.argv[0].endswith('__main__.py'))\n";

  // A package: its __main__ runs, found from the working directory, with the arguments after --.
  const auto a = sb.gilhost("run -m pkg -p " + build + " --repeat 2 -o m.jsonl -- --size 'two words'");
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  auto lines = json_lines(sb.dir / "m.jsonl");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["experiment"]["module"] == "pkg");
  CHECK(lines[0]["experiment"]["cases"][0]["module"] == "pkg");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    CHECK(lines[i]["status"] == "ok");
    CHECK(lines[i]["stdout"].get<std::string>().find("main __main__ pkg.__main__ pkg ['--size', 'two words'] True") !=
          std::string::npos);
  }

  // A module that is not there is the run's error, python's own ImportError.
  const auto missing = sb.gilhost("run -m no_such_module_here -p " + build + " --repeat 1 -o missing.jsonl");
  CHECK(missing.exit_code == 1);  // the implied expectation (status ok) failed
  lines = json_lines(sb.dir / "missing.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["status"] == "error");
  CHECK(lines[1]["stderr"].get<std::string>().find("No module named no_such_module_here") != std::string::npos);

  // In a file: a call into a module by name.
  lines = run_file_once(sb, "call", "[experiment]\nname = \"m\"\nmodule = \"pkg\"\n"
                                    "[[case]]\nname = \"double\"\ncall = \"double\"\nparams = { n = 21 }\n", build, 0);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["result"] == 42);

  // Misuse: files and -m together, a name that is not one.
  CHECK(sb.gilhost("run call.toml -m pkg").exit_code == 2);
  const auto bad = sb.gilhost("run -m 'a-b'");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("not a module name") != std::string::npos);
}

TEST_CASE("a call case's script named like a module Python has already imported is a clear error", "[e2e][everyday]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("everyday");
  std::ofstream(sb.dir / "abc.py") << "def f():\n    return 1\n";  // abc: imported by every interpreter's start-up
  const std::string call_f = "[[case]]\nname = \"f\"\ncall = \"f\"\n";
  // Exit status 1: the implied expectation (status ok) failed.
  auto lines = run_file_once(sb, "shadow", "[experiment]\nname = \"shadow\"\nscript = \"abc.py\"\n" + call_f, build, 1);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["status"] == "error");
  CHECK(lines[1]["error"]["type"] == "ImportError");
  CHECK(lines[1]["error"]["message"].get<std::string>().find("rename the script") != std::string::npos);

  // The same function from a file of another name runs.
  fs::rename(sb.dir / "abc.py", sb.dir / "abc_case.py");
  lines = run_file_once(sb, "fine", "[experiment]\nname = \"fine\"\nscript = \"abc_case.py\"\n" + call_f, build, 0);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["result"] == 1);

  // A package of the script's name beside it is not taken for the script (it is imported by its path),
  // and the script still imports what lies beside it (its folder leads sys.path, as for `python script.py`).
  fs::create_directories(sb.dir / "abc_case");
  std::ofstream(sb.dir / "abc_case" / "__init__.py") << "raise RuntimeError('the package, not the script')\n";
  std::ofstream(sb.dir / "helper_beside.py") << "VALUE = 41\n";
  std::ofstream(sb.dir / "abc_case.py") << "import helper_beside\ndef f():\n    return helper_beside.VALUE + 1\n";
  lines = run_file_once(sb, "pkg", "[experiment]\nname = \"pkg\"\nscript = \"abc_case.py\"\n" + call_f, build, 0);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["result"] == 42);
}

TEST_CASE("--sample-interval sets the sampler's tick over the file's, recorded in the meta", "[e2e][everyday]") {
  const std::string build = embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("everyday");
  std::ofstream(sb.dir / "nap.py") << "import time\ntime.sleep(0.3)\n";
  // The RSS samples of one 0.3 s run: about 150 at 2 ms, about 30 at the default 10 ms.
  auto samples_at = [&](const std::string& option) {
    const auto r = sb.gilhost("run nap.py -p " + build + " --repeat 1 --warmup 0 --no-lock -o r.jsonl " + option);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = json_lines(sb.dir / "r.jsonl");
    fs::remove(sb.dir / "r.jsonl");
    REQUIRE(lines.size() == 2);
    CHECK(lines[0]["experiment"]["sample_interval_ms"] == (option.empty() ? 10 : 2));
    CHECK(lines[1]["thread_states"]["interval_ms"] == (option.empty() ? 10 : 2));
    return lines[1]["rss"]["samples"].get<long>();
  };
  const long fine = samples_at("--sample-interval 2"), coarse = samples_at("");
  INFO(fine << " samples at 2 ms, " << coarse << " at 10 ms");
  CHECK(fine > 2 * coarse);
  const auto zero = sb.gilhost("run nap.py -p " + build + " --sample-interval 0");
  CHECK(zero.exit_code != 0);
  CHECK(zero.err.find("--sample-interval") != std::string::npos);
}

TEST_CASE("every everyday option is in gilhost run --help", "[e2e][everyday]") {
  const auto run_help = gilhost::run_capture({kGilhost, "run", "--help"}, 30);
  CHECK(run_help.exit_code == 0);
  for (const char* option : {"-m,--module", "--sample-interval MS", "--case GLOB", "--param KEY=VALUE", "--no-lock", "--cpus LIST", "NAME-TIMESTAMP-PID",
                             "appended to", "gilhost run bench.py", "gilhost run -m timeit", "governor"})
    CHECK(run_help.out.find(option) != std::string::npos);
  const auto compare_help = gilhost::run_capture({kGilhost, "compare", "--help"}, 30);
  for (const char* option : {"--alpha", "--fail-on-change", "Mann"}) CHECK(compare_help.out.find(option) != std::string::npos);
}
