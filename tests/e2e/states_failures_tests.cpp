// Issue 26, items 5 and 7, as a user meets them: `gilhost run` of a script with a CPU thread, a sleeper, a
// lock waiter and a socket reader shows where each thread's time went and which ones were blocked; a
// script that hangs on a lock says so; a syntax error on two builds is said once, with both builds, its
// paths whole. What the asserts rest on holds under load: a sleeping, lock-waiting or reading thread is
// off the CPU whatever the machine does.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox.hpp"

namespace fs = std::filesystem;
using e2e::has;
using e2e::Sandbox;
using e2e::write_text;
using nlohmann::json;

namespace {


std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + needle.size())) ++n;
  return n;
}

// Two GIL builds that run embedded (the newest two gilhost finds), or fewer where the machine has fewer.
std::vector<std::string> two_embeddable_builds() {
  std::vector<std::string> out;
  const auto c = gilhost::run_capture({GILHOST_BINARY, "pythons", "--json"}, 300);
  const json list = json::parse(c.out, nullptr, false);
  if (list.is_array())
    for (const auto& i : list)
      if (i.value("supported", false) && !i.value("free_threaded", false) && i.value("shared", false))
        out.push_back(i.value("label", ""));
  if (out.size() > 2) out.erase(out.begin(), out.end() - 2);
  return out;
}

const char* kFourThreads =
    "import socket, threading, time\n"
    "def spin():\n"
    "    end = time.monotonic() + 1.0\n"
    "    while time.monotonic() < end: pass\n"
    "def sleeper():\n"
    "    time.sleep(1.0)\n"
    "lock = threading.Lock()\n"
    "lock.acquire()\n"
    "def lock_waiter():\n"
    "    lock.acquire(timeout=1.0)\n"
    "a, b = socket.socketpair()\n"
    "def reader():\n"
    "    b.settimeout(1.0)\n"
    "    try:\n"
    "        b.recv(1)\n"
    "    except socket.timeout:\n"
    "        pass\n"
    "ts = [threading.Thread(target=f, name=f.__name__) for f in (spin, sleeper, lock_waiter, reader)]\n"
    "for t in ts: t.start()\n"
    "for t in ts: t.join()\n";

}  // namespace

TEST_CASE("run shows where each thread's time went, and names the threads that were blocked", "[e2e][states]") {
  const std::string build = e2e::embeddable_build();
  REQUIRE_FALSE(build.empty());  // the machine has what the test needs
  Sandbox sb("states");
  write_text(sb.dir / "four.py", kFourThreads);
  const auto r = sb.gilhost("run four.py -p " + build + " --repeat 1 --precision off --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "where the threads' time went (median % of the Python threads' time):"));
  CHECK(has(r.out, " cpu core GIL lock I/O sleep  bar\n"));
  // The row: figures, then a bar with sleep, lock and I/O letters in it (each thread a fifth of the time).
  const auto row = r.out.find("\n  four @ " + build);
  REQUIRE(row != std::string::npos);
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  CHECK(has(line, "LLL"));
  CHECK(has(line, "III"));
  CHECK(has(line, "SSS"));
  CHECK(has(r.out, "bar: a letter per 5 %: C cpu, Q core"));
  // The reading names the three that blocked, and not the main thread that joined them.
  CHECK(has(r.out, "3 of 5 threads mostly blocked: sleeper asleep"));
  CHECK(has(r.out, "lock_waiter on a lock"));
  CHECK(has(r.out, "reader on I/O"));
  CHECK_FALSE(has(r.out, "MainThread (main) on a lock"));
  // The same from `report`.
  const auto rep = sb.gilhost("report r.jsonl");
  CHECK(has(rep.out, "3 of 5 threads mostly blocked: sleeper asleep"));
  CHECK(has(rep.out, " cpu core GIL lock I/O sleep  bar\n"));
}

TEST_CASE("a script that hangs on a lock: its threads blocked on it until the timeout", "[e2e][states]") {
  const std::string build = e2e::embeddable_build();
  REQUIRE_FALSE(build.empty());
  Sandbox sb("states");
  write_text(sb.dir / "locked.py",
             "import threading\nlock = threading.Lock()\nlock.acquire()\n"
             "def waiter():\n    with lock:\n        pass\n"
             "ts = [threading.Thread(target=waiter) for _ in range(3)]\n"
             "for t in ts: t.start()\nfor t in ts: t.join()\n");
  const auto r = sb.gilhost("run locked.py -p " + build + " --timeout 2 --precision off --no-lock -o r.jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK(has(r.out, "locked @ " + build + " (failed)"));
  // The three waiters always; the main thread too where its start-up was short (under load it may not be).
  // The reading's text unwrapped, from the JSON report.
  const json report = json::parse(sb.gilhost("report r.jsonl --format json").out, nullptr, false);
  std::string text;
  if (report.is_object())
    for (const auto& reading : report["experiments"][0]["readings"])
      if (reading.value("rule", "") == "blocked") text = reading.value("text", "");
  INFO(text);
  const bool all = text == "all 4 threads blocked on a lock until the timeout (a failed run)";
  const bool three = has(text, "3 of 4 threads mostly blocked:") && count(text, " on a lock ") == 3;
  CHECK((all || three));
  CHECK(has(text, "until the timeout"));
}

TEST_CASE("a syntax error on two builds: one traceback with both builds, no time, no expectation, paths whole", "[e2e][failures]") {
  const std::vector<std::string> builds = two_embeddable_builds();
  REQUIRE(builds.size() == 2);
  Sandbox sb("failures");
  write_text(sb.dir / "bad.py", "import threading\n\ndef work(:\n    pass\n");
  // A results folder whose path is longer than the terminal: no line may break it.
  const std::string deep = "results_of_a_session_with_a_name_long_enough_that_no_line_of_80_columns_holds_its_path";
  fs::create_directories(sb.dir / deep);
  const auto r = sb.gilhost("run bad.py -p " + builds[0] + " -p " + builds[1] + " --no-lock -o " + deep + "/r.jsonl");
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK(has(r.out, "✗ bad @ " + builds[0] + ", " + builds[1] + " (did not run: 1 of 1 runs failed on each):"));
  CHECK(count(r.out, "\n      SyntaxError: invalid syntax\n") == 1);  // the traceback's last line, once
  CHECK(count(r.out, "def work(:") == 1);
  CHECK_FALSE(has(r.out, "gilhost-bootstrap"));
  CHECK_FALSE(has(r.out, "expectations not met"));
  CHECK_FALSE(has(r.out, "vs " + builds[0]));
  CHECK_FALSE(has(r.out, "µs"));
  CHECK(has(r.out, "did not run"));
  // Its runs have thread states, but no case ran: nothing to say of where its threads' time went.
  CHECK_FALSE(has(r.out, "where the threads' time went"));
  // Each stderr file named whole on its own line, and there.
  std::istringstream lines(r.out);
  int named = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("full stderr: ");
    if (at == std::string::npos) continue;
    ++named;
    const std::string path = line.substr(at + 13);
    CHECK(path.size() > 80);
    CHECK(fs::exists(fs::path(path).is_absolute() ? fs::path(path) : sb.dir / path));
  }
  CHECK(named == 2);
}
