// Issue 19, the answer first: gilhost check checks the Python side (point 3), and the loose ends (point 9).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"

namespace fs = std::filesystem;
using e2e::json_lines;
using e2e::has;
using e2e::Sandbox;
using e2e::write_text;
using e2e::read_text;
using nlohmann::json;

namespace {


// An experiment of `work.py` whose one case calls `call`.
void experiment(const Sandbox& sb, const std::string& script, const std::string& call) {
  write_text(sb.dir / "work.py", script);
  write_text(sb.dir / "x.toml",
        "[experiment]\nname = \"x\"\nscript = \"work.py\"\ninterpreters = [\"3.12\"]\n\n"
        "[[case]]\nname = \"one\"\ncall = \"" + call + "\"\n");
}

const char* kGood = "import time\nfrom os import path as p\n\ndef nap(t=0.01):\n    time.sleep(t)\n\n"
                    "async def later():\n    pass\n\nalias = nap\n";

}  // namespace

TEST_CASE("check: a good file passes on the builds it names", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nap");
  const auto r = sb.gilhost("check x.toml");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "x.toml: ok"));
  CHECK(has(r.out, "3.12."));
  for (const char* other : {"later", "alias", "p"}) {  // async def, an assignment, an import bind names too
    experiment(sb, kGood, other);
    const auto o = sb.gilhost("check x.toml");
    INFO(other << ": " << o.out << o.err);
    CHECK(o.exit_code == 0);
  }
}

TEST_CASE("check: a syntax error is located at its line and column, with the build", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, "def nap():\n    pass\n\nx = (1,\n     2 +)\n", "nap");
  const auto r = sb.gilhost("check x.toml");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "work.py:5:"));
  CHECK(has(r.err, ": SyntaxError: "));
  CHECK(has(r.err, "(on 3.12."));
  CHECK_FALSE(has(r.out, ": ok"));
}

TEST_CASE("check: a call that names no function is located in the TOML, with the functions there are",
          "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nope");
  const auto r = sb.gilhost("check x.toml");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  // [[case]] is on line 6, call on line 8; the value starts at column 8.
  CHECK(has(r.err, "x.toml:8:8: call = \"nope\": work.py has no top-level function 'nope' (functions: nap, later)"));
}

TEST_CASE("check: a setup that names no function is located like a call", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nap");
  write_text(sb.dir / "x.toml", read_text(sb.dir / "x.toml") + "setup = \"warm\"\n");
  const auto r = sb.gilhost("check x.toml");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  // setup is on line 9 of x.toml; the value starts at column 9.
  CHECK(has(r.err, "x.toml:9:9: setup = \"warm\": work.py has no top-level function 'warm'"));
}

TEST_CASE("check: a module case is found as run finds it, and its function checked", "[e2e][answer-check]") {
  Sandbox sb("check");
  fs::create_directories(sb.dir / "pkg");
  write_text(sb.dir / "pkg" / "__init__.py", "");
  write_text(sb.dir / "pkg" / "work.py", kGood);
  write_text(sb.dir / "m.toml",
        "[experiment]\nname = \"m\"\nmodule = \"pkg.work\"\ninterpreters = [\"3.12\"]\n\n"
        "[[case]]\nname = \"a\"\ncall = \"nap\"\n\n[[case]]\nname = \"b\"\ncall = \"gone\"\n"
        "\n[[case]]\nname = \"c\"\nmodule = \"pkg.absent\"\ncall = \"nap\"\n");
  const auto r = sb.gilhost("check m.toml");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "m.toml:12:8: call = \"gone\": pkg/work.py has no top-level function 'gone'"));
  CHECK(has(r.err, "pkg.absent: no module named 'pkg.absent'"));
  CHECK_FALSE(has(r.err, "'nap'"));
}

TEST_CASE("check: a 3.12-only f-string fails on 3.9 only, when both are selected with -p", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, "def nap():\n    return f\"{\"a\"}\"\n", "nap");
  const auto r = sb.gilhost("check x.toml -p 3.9 -p 3.12");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "work.py:2:"));
  CHECK(has(r.err, "(on 3.9."));
  CHECK_FALSE(has(r.err, "3.12."));
  const auto only_312 = sb.gilhost("check x.toml -p 3.12");
  INFO(only_312.out << only_312.err);
  CHECK(only_312.exit_code == 0);
}

TEST_CASE("an unmatched selector beside a good one is an error before anything runs", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nap");
  const auto r = sb.gilhost("run x.toml -p 3.12 -p pypy --repeat 1 --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "pypy: "));
  CHECK(has(r.err, "3.12."));  // what was found
  CHECK_FALSE(fs::exists(sb.dir / "r.jsonl"));
  const auto c = sb.gilhost("check x.toml -p 3.12 -p 3.99");
  INFO(c.out << c.err);
  CHECK(c.exit_code == 2);
  CHECK(has(c.err, "'3.99'"));
}

TEST_CASE("report says when a file holds several sessions and --session picks one", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nap");
  for (const char* t : {"0.01", "0.2"}) {
    const auto r = sb.gilhost(std::string("run x.toml --repeat 1 --no-lock -o two.jsonl --param t=") + t);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  const auto all = sb.gilhost("report two.jsonl");
  INFO(all.out << all.err);
  CHECK(all.exit_code == 0);
  CHECK(has(all.err, "2 sessions"));
  CHECK(has(all.err, "--session"));
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  const auto pooled = sb.gilhost("export two.jsonl -f csv");
  const auto last = sb.gilhost("export two.jsonl --session -1 -f csv");
  INFO(pooled.out << last.out << last.err);
  REQUIRE(last.exit_code == 0);
  CHECK_FALSE(has(last.err, "2 sessions"));
  CHECK(lines(pooled.out) == lines(last.out) + 1);  // one run a session
  CHECK(has(last.out, "0.2"));
  const auto none = sb.gilhost("export two.jsonl --session 3");
  CHECK(none.exit_code == 2);
  CHECK(has(none.err, "there are 2 sessions"));
}

TEST_CASE("after Ctrl-C the case that was running is listed as interrupted", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, "import time\n\ndef nap():\n    time.sleep(30)\n", "nap");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::chdir(sb.dir.c_str());
    ::setenv("XDG_CACHE_HOME", (sb.dir / "cache").c_str(), 1);
    ::execl(GILHOST_BINARY, "gilhost", "run", "x.toml", "--repeat", "1", "--no-lock", "-o", "r.jsonl", nullptr);
    ::_exit(127);
  }
  const auto started = std::chrono::steady_clock::now();
  // The meta line is written before the first run starts; the run then sleeps 30 s.
  while (!has(read_text(sb.dir / "r.jsonl"), "\n") && std::chrono::steady_clock::now() - started < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  bool listed = false;
  for (const auto& line : json_lines(sb.dir / "r.jsonl"))
    if (line.value("type", "") == "skip" && line.value("case", "") == "one" && has(line.value("reason", ""), "interrupted"))
      listed = true;
  CHECK(listed);
  const auto report = sb.gilhost("report r.jsonl");
  INFO(report.out << report.err);
  CHECK(has(report.out, "interrupted"));
}

TEST_CASE("-o /dev/null works", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nap");
  const auto r = sb.gilhost("run x.toml --repeat 1 --no-lock -o /dev/null");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "one"));
  const auto again = sb.gilhost("run x.toml --repeat 1 --no-lock -o out.jsonl");
  REQUIRE(again.exit_code == 0);
  const auto rep = sb.gilhost("report out.jsonl -f md -o /dev/null");
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == 0);
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("bare gilhost prints the usage; a misspelt command or option gets a 'did you mean'", "[e2e][answer-check]") {
  Sandbox sb("check");
  const auto bare = sb.gilhost("");
  CHECK(bare.exit_code == 2);
  CHECK(has(bare.out + bare.err, "Usage"));
  CHECK(has(bare.out + bare.err, "run"));
  CHECK_FALSE(has(bare.out + bare.err, "A subcommand is required"));
  const auto rnu = sb.gilhost("rnu x.toml");
  CHECK(rnu.exit_code == 2);
  CHECK(has(rnu.err, "did you mean 'run'?"));
  experiment(sb, kGood, "nap");
  const auto quik = sb.gilhost("run x.toml --quik");
  INFO(quik.out << quik.err);
  CHECK(quik.exit_code == 2);
  CHECK(has(quik.err, "did you mean '--quick'"));
}

TEST_CASE("plain ASCII on the terminal when the locale is not UTF-8; UTF-8 files stay UTF-8", "[e2e][answer-check]") {
  Sandbox sb("check");
  experiment(sb, kGood, "nap");
  const auto r = sb.gilhost("run x.toml --repeat 2 --no-lock -o r.jsonl");
  REQUIRE(r.exit_code == 0);
  const auto is_ascii = [](const std::string& s) {
    for (unsigned char c : s)
      if (c >= 0x80) return false;
    return true;
  };
  // The UTF-8 text has symbols to replace, or the test would prove nothing.
  const auto utf8 = sb.gilhost("report r.jsonl");
  REQUIRE_FALSE(is_ascii(utf8.out));
  const auto c_locale = [&](const std::string& args) {
    const std::string cmd = "cd '" + sb.dir.string() + "' && LC_ALL=C XDG_CACHE_HOME='" + (sb.dir / "cache").string() +
                            "' exec '" + GILHOST_BINARY + "' " + args;
    return gilhost::run_capture({"bash", "-c", cmd}, 600);
  };
  const auto report = c_locale("report r.jsonl");
  INFO(report.out << report.err);
  CHECK(report.exit_code == 0);
  CHECK(is_ascii(report.out));
  CHECK(is_ascii(report.err));
  const auto run = c_locale("run x.toml --repeat 2 --no-lock -o c.jsonl");
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK(is_ascii(run.out + run.err));
  CHECK(has(run.out, "one"));
  const auto html = c_locale("report c.jsonl -f html -o c.html");
  CHECK(html.exit_code == 0);
  CHECK_FALSE(is_ascii(read_text(sb.dir / "c.html")));
}
