// Reliability, end to end: runs that go wrong in every way we know of (deadlocks, exits from threads,
// crashes, fork bombs, daemons, gigabytes of output), and gilhost itself interrupted or killed part-way.
// Each fault is recorded with its cause; no process of a run outlives it; the results file never holds a
// torn line; bad input gets a clear message and exit status 2.
//
// This test process makes itself a child subreaper, so whatever a gilhost session leaves behind is
// re-parented to it: "no orphans" is checked exactly (our own live children) rather than by grepping ps.
// Fixtures that fork write every pid to $FAULTS_PID_FILE, and each of those is checked to be gone.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/fd.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/version.hpp"
#include "sandbox.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The memory bound on gilhost while a run prints gigabytes. Under ASan (GILHOST_SANITIZE) freed memory
// sits in its quarantine (256 MiB by default), so the bound is that much higher; both are far below the
// 2 GiB a host that kept the output would need.
constexpr long kMaxRssKb = (e2e::kUnderAsan ? 400 : 100) * 1024;

const std::string kGilhost = GILHOST_BINARY;
const std::string kFixtures = std::string(GILHOST_SOURCE_DIR) + "/tests/fixtures/";

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Build {
  std::string label, executable;
  gilhost::Version version;
};

// The oldest and the newest supported GIL build found (one when there is one).
std::vector<Build> oldest_and_newest() {
  static std::vector<Build> builds = [] {
    std::vector<Build> all;
    auto c = gilhost::run_capture({kGilhost, "pythons", "--json"}, 120);
    auto j = json::parse(c.out, nullptr, false);
    if (j.is_array())
      for (const auto& i : j)
        if (i.value("supported", false) && !i.value("free_threaded", false))
          all.push_back({i.value("label", ""), i.value("executable", ""),
                         gilhost::Version::parse(i.value("version", "")).value_or(gilhost::Version{})});
    if (all.size() < 2) return all;
    Build oldest = all.front(), newest = all.front();
    for (const auto& b : all) {
      if (b.version < oldest.version) oldest = b;
      if (newest.version < b.version) newest = b;
    }
    return std::vector<Build>{oldest, newest};
  }();
  return builds;
}

Build newest() {
  auto b = oldest_and_newest();
  REQUIRE(!b.empty());
  return b.back();
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gilhost-rel-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void become_subreaper() {
  static const bool done = [] { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }();
  REQUIRE(done);
}

// A gilhost started in the background, its output in files, FAULTS_PID_FILE in its environment.
struct Gilhost {
  pid_t pid = -1;
  std::string out_path, err_path;

  Gilhost(std::vector<std::string> args, const TempDir& dir, const std::string& pid_file) {
    become_subreaper();
    out_path = dir / "gilhost.out";
    err_path = dir / "gilhost.err";
    args.insert(args.begin(), kGilhost);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::setenv("FAULTS_PID_FILE", pid_file.c_str(), 1);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }

  struct Ended {
    bool exited = false;
    int code = -1;
    int signal = 0;
    bool hung = false;
    rusage usage{};  // gilhost and the runners it reaped: ru_maxrss is the largest of them
    std::string out, err;
  };

  // Waits at most `limit_s`; a gilhost still running then is killed and reported as hung.
  Ended wait(double limit_s) {
    Ended e;
    int status = 0;
    const double deadline = now_s() + limit_s;
    for (;;) {
      pid_t r = ::wait4(pid, &status, WNOHANG, &e.usage);
      if (r == pid) break;
      if (now_s() > deadline) {
        e.hung = true;
        ::kill(pid, SIGKILL);
        ::wait4(pid, &status, 0, &e.usage);
        break;
      }
      sleep_s(0.01);
    }
    pid = -1;
    e.exited = WIFEXITED(status);
    e.code = e.exited ? WEXITSTATUS(status) : -1;
    e.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    e.out = gilhost::read_file(out_path);
    e.err = gilhost::read_file(err_path);
    return e;
  }

  ~Gilhost() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

char proc_state(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? 0 : text[close + 2];
}

// Our live children: with no gilhost running, every one is an orphan of a session. Zombies are reaped.
std::vector<pid_t> live_children() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  std::vector<pid_t> out;
  const std::string self = std::to_string(::getpid());
  DIR* d = ::opendir("/proc");
  while (dirent* e = d ? ::readdir(d) : nullptr) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    auto fields = gilhost::split(text.substr(close + 2), ' ');
    if (fields.size() > 1 && fields[1] == self && fields[0] != "Z") out.push_back(std::atoi(e->d_name));
  }
  if (d) ::closedir(d);
  return out;
}

std::vector<pid_t> read_pids(const std::string& pid_file) {
  std::vector<pid_t> pids;
  if (!fs::exists(pid_file)) return pids;
  for (const auto& line : gilhost::split(gilhost::read_file(pid_file), '\n'))
    if (!gilhost::trim(line).empty()) pids.push_back(std::atoi(line.c_str()));
  return pids;
}

// The recorded pids still alive after up to `grace_s` (a SIGKILLed process takes a moment to die), and
// our orphans; both are killed, so a failing test leaves nothing either.
struct Leftovers {
  std::vector<pid_t> recorded_alive, orphans;
  bool none() const { return recorded_alive.empty() && orphans.empty(); }
};

Leftovers leftovers(const std::string& pid_file, double grace_s = 1.0) {
  Leftovers l;
  const double deadline = now_s() + grace_s;
  for (;;) {
    l.recorded_alive.clear();
    for (pid_t p : read_pids(pid_file)) {
      char st = proc_state(p);
      if (st != 0 && st != 'Z' && st != 'X') l.recorded_alive.push_back(p);
    }
    l.orphans = live_children();
    if (l.none() || now_s() > deadline) break;
    sleep_s(0.02);
  }
  for (pid_t p : l.recorded_alive) ::kill(p, SIGKILL);
  for (pid_t p : l.orphans) ::kill(p, SIGKILL);
  return l;
}

// Every line of a results file, parsed strictly: a torn line is a failure, not something to skip.
struct Lines {
  std::vector<json> metas, runs;
  int torn = 0;
  bool ends_with_newline = true;
  const json* find(const std::string& c, const std::string& interp = "") const {
    for (const auto& r : runs)
      if (r["case"] == c && (interp.empty() || r["interpreter"] == interp)) return &r;
    return nullptr;
  }
};

Lines read_lines(const std::string& path) {
  Lines l;
  if (!fs::exists(path)) return l;
  const std::string text = gilhost::read_file(path);
  l.ends_with_newline = text.empty() || text.back() == '\n';
  for (const auto& line : gilhost::split(text, '\n')) {
    if (line.empty()) continue;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++l.torn;
      continue;
    }
    if (j["type"] == "meta") l.metas.push_back(j);
    if (j["type"] == "run") l.runs.push_back(j);
  }
  return l;
}

int complete_lines(const std::string& path) {
  if (!fs::exists(path)) return 0;
  const std::string text = gilhost::read_file(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Waits until `path` holds at least `n` complete lines (or `pids_file` at least `pids` pids).
bool wait_until(const std::function<bool()>& done, double limit_s) {
  const double deadline = now_s() + limit_s;
  while (!done()) {
    if (now_s() > deadline) return false;
    sleep_s(0.01);
  }
  return true;
}

std::vector<std::string> run_args(const std::string& config, const std::vector<Build>& builds,
                                  const std::string& results, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"run", kFixtures + config, "-o", results, "--no-details"};
  for (const auto& b : builds) {
    a.push_back("-p");
    a.push_back(b.executable);
  }
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Whether the limit on descriptors (which gilhost and its children inherit) leaves fds 1024 and 1025
// free, where the child keeps copies of its event and watch pipes.
bool room_above_1024() {
  rlimit lim{};
  return ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur > 1025;
}

// The run options for embed mode (none) or exec mode.
std::vector<std::string> mode_flags(bool exec_mode) {
  return exec_mode ? std::vector<std::string>{"--exec"} : std::vector<std::string>{};
}

}  // namespace

TEST_CASE("a deadlock, exits from a thread, a thread shutdown waits for and crashes in threads are recorded "
          "with their cause", "[e2e][reliability]") {
  auto builds = oldest_and_newest();
  REQUIRE(!builds.empty());
  TempDir dir;
  Gilhost g(run_args("faults_threads.toml", builds, dir / "r.jsonl"), dir, dir / "pids");
  auto e = g.wait(120);
  INFO(e.out << e.err);
  REQUIRE(!e.hung);
  CHECK(e.code == 0);  // every expectation in the file held
  Lines l = read_lines(dir / "r.jsonl");
  CHECK(l.torn == 0);
  for (const auto& b : builds) {
    INFO(b.label);
    const json* dl = l.find("deadlock", b.label);
    REQUIRE(dl);
    CHECK((*dl)["status"] == "timeout");
    CHECK((*dl)["rss"]["peak_threads"].get<int>() >= 3);  // both deadlocked threads were seen
    CHECK((*dl)["parent_wall_ns"].get<long long>() < 6'000'000'000LL);

    const json* ox = l.find("os_exit_in_thread", b.label);
    REQUIRE(ox);
    CHECK((*ox)["status"] == "error");
    CHECK((*ox)["exit_code"] == 7);
    CHECK((*ox)["has_result"] == false);
    CHECK((*ox)["wall_from"] == "parent");
    CHECK((*ox)["note"].get<std::string>().find("before the case was reported") != std::string::npos);

    const json* sx = l.find("sys_exit_in_thread", b.label);
    REQUIRE(sx);
    CHECK((*sx)["status"] == "ok");
    CHECK((*sx)["exit_code"] == 0);
    CHECK((*sx)["result"] == "the main thread went on");

    const json* he = l.find("hang_at_exit", b.label);
    REQUIRE(he);
    CHECK((*he)["status"] == "timeout");
    CHECK((*he)["result"] == "returned");  // the case itself finished and was reported
    CHECK((*he)["note"].get<std::string>().find("after the case returned") != std::string::npos);

    const json* st = l.find("segfault_in_thread", b.label);
    REQUIRE(st);
    CHECK((*st)["status"] == "crashed");
    CHECK((*st)["signal"] == SIGSEGV);
    CHECK((*st)["note"].get<std::string>().find("Segmentation fault") != std::string::npos);

    const json* ab = l.find("abort", b.label);
    REQUIRE(ab);
    CHECK((*ab)["status"] == "crashed");
    CHECK((*ab)["signal"] == SIGABRT);
  }
  Leftovers left = leftovers(dir / "pids");
  CHECK(left.orphans.empty());
}

TEST_CASE("fork bombs and daemons: every process of a run is killed, in its process group or out of it",
          "[e2e][reliability]") {
  const Build b = newest();
  TempDir dir;
  Gilhost g(run_args("faults_tree.toml", {b}, dir / "r.jsonl"), dir, dir / "pids");
  auto e = g.wait(120);
  INFO(e.out << e.err);
  REQUIRE(!e.hung);
  CHECK(e.code == 0);
  Lines l = read_lines(dir / "r.jsonl");
  CHECK(l.torn == 0);

  const json* bt = l.find("bomb_timeout");
  REQUIRE(bt);
  CHECK((*bt)["status"] == "timeout");
  CHECK((*bt)["rss"]["peak_processes"].get<int>() >= 150);  // the sampler saw the bomb (201 processes)
  CHECK((*bt)["parent_wall_ns"].get<long long>() < 8'000'000'000LL);

  const json* br = l.find("bomb_return");
  REQUIRE(br);
  CHECK((*br)["status"] == "ok");
  CHECK((*br)["leftover_processes"].get<int>() >= 190);  // ~50 of them in sessions of their own

  const json* dm = l.find("daemons");
  REQUIRE(dm);
  CHECK((*dm)["status"] == "ok");
  CHECK((*dm)["leftover_processes"] == 2);  // a new-session child, and a double-forked daemon

  const json* of = l.find("orphan_floods");
  REQUIRE(of);
  CHECK((*of)["status"] == "ok");
  CHECK((*of)["leftover_processes"] == 3);

  auto pids = read_pids(dir / "pids");
  CHECK(pids.size() >= 2 * 201 + 2 + 3);
  Leftovers left = leftovers(dir / "pids");
  INFO("still alive: " << left.recorded_alive.size() << " recorded, " << left.orphans.size() << " orphans");
  CHECK(left.none());
}

TEST_CASE("gigabytes of output are read to the end in bounded memory; endless output ends at the timeout",
          "[e2e][reliability]") {
  const Build b = newest();
  TempDir dir;
  {
    Gilhost g(run_args("faults_output.toml", {b}, dir / "flood.jsonl", {"--profile", "flood"}), dir, dir / "pids");
    auto e = g.wait(180);
    INFO(e.out << e.err);
    REQUIRE(!e.hung);
    CHECK(e.code == 0);
    // The largest of gilhost and its runners: a host that kept the output would be over 2 GB.
    CHECK(e.usage.ru_maxrss < kMaxRssKb);
    Lines l = read_lines(dir / "flood.jsonl");
    const json* f = l.find("flood");
    REQUIRE(f);
    CHECK((*f)["status"] == "ok");
    CHECK((*f)["stdout_bytes"] == 2048ULL << 20);
    CHECK((*f)["stdout"].get<std::string>().size() < 1200000);
    CHECK((*f)["stderr"].get<std::string>().find("flood done") != std::string::npos);
    CHECK(fs::file_size(dir / "flood.jsonl") < 8u << 20);
  }
  {
    Gilhost g(run_args("faults_output.toml", {b}, dir / "forever.jsonl", {"--profile", "forever"}), dir, dir / "pids");
    auto e = g.wait(60);
    INFO(e.out << e.err);
    REQUIRE(!e.hung);
    CHECK(e.code == 0);
    CHECK(e.usage.ru_maxrss < kMaxRssKb);
    Lines l = read_lines(dir / "forever.jsonl");
    const json* f = l.find("flood_forever");
    REQUIRE(f);
    CHECK((*f)["status"] == "timeout");
    CHECK((*f)["parent_wall_ns"].get<long long>() < 5'000'000'000LL);
    CHECK((*f)["stdout_bytes"].get<long long>() > 10'000'000);
    CHECK((*f)["stderr_bytes"].get<long long>() > 0);
    CHECK((*f)["stdout"].get<std::string>().size() < 1200000);
  }
  CHECK(leftovers(dir / "pids").none());
}

TEST_CASE("Ctrl-C keeps every finished run, exits 130 and leaves no process behind", "[e2e][reliability]") {
  const Build b = newest();
  TempDir dir;
  const std::string results = dir / "r.jsonl";
  Gilhost g(run_args("faults_slow.toml", {b}, results), dir, dir / "pids");
  // The meta line and the first run's: then Ctrl-C, part-way through a later run.
  REQUIRE(wait_until([&] { return complete_lines(results) >= 2; }, 60));
  sleep_s(0.1);
  ::kill(g.pid, SIGINT);
  auto e = g.wait(20);
  INFO(e.out << e.err);
  REQUIRE(!e.hung);
  CHECK(e.exited);
  CHECK(e.code == 130);
  CHECK(e.err.find("interrupted") != std::string::npos);
  Lines l = read_lines(results);
  CHECK(l.torn == 0);
  CHECK(l.ends_with_newline);
  CHECK(l.metas.size() == 1);
  CHECK(l.runs.size() >= 1);
  CHECK(l.runs.size() < 8);
  for (const auto& r : l.runs) CHECK(r["status"] == "ok");  // the run cut short is not recorded
  CHECK(e.out.find("slow") != std::string::npos);  // the table of the finished runs was printed
  Leftovers left = leftovers(dir / "pids");
  CHECK(left.none());
}

TEST_CASE("a runner rebuilt while a session runs: every run starts the runner the session began with",
          "[e2e][reliability]") {
  const Build b = newest();
  TempDir dir;
  const std::string results = dir / "r.jsonl";
  const std::string runner = dir / "gilhost-runner";
  std::filesystem::copy_file(std::filesystem::path(kGilhost).parent_path() / "gilhost-runner", runner);
  ::setenv("GILHOST_RUNNER", runner.c_str(), 1);
  Gilhost g(run_args("faults_slow.toml", {b}, results), dir, dir / "pids");
  ::unsetenv("GILHOST_RUNNER");
  REQUIRE(wait_until([&] { return complete_lines(results) >= 2; }, 60));
  // As a linker writes its output: the old file unlinked, a new one in its place, not yet executable.
  REQUIRE(::unlink(runner.c_str()) == 0);
  std::ofstream(runner) << "half-written\n";
  auto e = g.wait(60);
  INFO(e.out << e.err);
  REQUIRE(!e.hung);
  CHECK(e.code == 0);
  Lines l = read_lines(results);
  CHECK(l.runs.size() == 8);
  for (const auto& r : l.runs) CHECK(r["status"] == "ok");
}

TEST_CASE("SIGTERM, SIGHUP and a second Ctrl-C end gilhost at once and still leave no process behind",
          "[e2e][reliability]") {
  const Build b = newest();
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) {
    DYNAMIC_SECTION("signal " << sig) {
      TempDir dir;
      const std::string results = dir / "r.jsonl";
      // A run that would sleep 20 s is in progress (its runner recorded its pid): an orphaned runner
      // would still be asleep when we look.
      Gilhost g(run_args("faults_slow.toml", {b}, results, {"--profile", "long"}), dir, dir / "pids");
      REQUIRE(wait_until([&] { return read_pids(dir / "pids").size() >= 1; }, 60));
      ::kill(g.pid, sig);
      if (sig == SIGINT) ::kill(g.pid, SIGINT);  // twice: "end now"
      auto e = g.wait(20);
      INFO(e.out << e.err);
      REQUIRE(!e.hung);
      if (sig == SIGINT) CHECK((e.signal == SIGINT || e.code == 130));  // the first may have finished already
      else CHECK(e.signal == sig);
      Lines l = read_lines(results);
      CHECK(l.torn == 0);
      CHECK(l.metas.size() == 1);
      Leftovers left = leftovers(dir / "pids", 0.5);
      CHECK(left.none());
    }
  }
}

TEST_CASE("kill -9 part-way: every line of the results file is whole, and the run in progress dies too",
          "[e2e][reliability]") {
  const Build b = newest();
  TempDir dir;
  const std::string results = dir / "r.jsonl";
  int sessions_with_meta = 0;
  // At several points of a session: during start-up, and during or between runs.
  for (double delay : {0.05, 0.35, 0.8, 1.25, 1.7}) {
    Gilhost g(run_args("faults_slow.toml", {b}, results), dir, dir / "pids");
    sleep_s(delay);
    ::kill(g.pid, SIGKILL);
    auto e = g.wait(20);
    CHECK(e.signal == SIGKILL);
    Lines l = read_lines(results);
    INFO("killed after " << delay << " s");
    CHECK(l.torn == 0);
    CHECK(l.ends_with_newline);
    sessions_with_meta = static_cast<int>(l.metas.size());
    // The runner dies with gilhost (PR_SET_PDEATHSIG) rather than run on unwatched.
    Leftovers left = leftovers(dir / "pids", 0.3);
    CHECK(left.none());
  }
  {
    // A run in progress that would sleep 20 s: it must be gone at once, not when it is done.
    const std::string long_pids = dir / "long-pids";
    Gilhost g(run_args("faults_slow.toml", {b}, dir / "long.jsonl", {"--profile", "long"}), dir, long_pids);
    REQUIRE(wait_until([&] { return read_pids(long_pids).size() >= 1; }, 60));
    ::kill(g.pid, SIGKILL);
    g.wait(20);
    Leftovers left = leftovers(long_pids, 0.5);
    CHECK(left.none());
  }
  // A later session appends to the same file; everything in it still parses.
  Gilhost g(run_args("faults_slow.toml", {b}, results, {"--repeat", "1"}), dir, dir / "pids");
  auto e = g.wait(60);
  INFO(e.out << e.err);
  CHECK(e.code == 0);
  Lines l = read_lines(results);
  CHECK(l.torn == 0);
  CHECK(static_cast<int>(l.metas.size()) == sessions_with_meta + 1);
  CHECK(leftovers(dir / "pids").none());
}

TEST_CASE("a results file whose last line was cut stays readable after the next session appends to it",
          "[e2e][reliability]") {
  const Build b = newest();
  TempDir dir;
  const std::string results = dir / "r.jsonl";
  {
    std::ofstream f(results);
    f << R"({"type":"meta","format":1})" << "\n" << R"({"type":"run","case":"torn","sta)";
  }
  Gilhost g(run_args("faults_slow.toml", {b}, results, {"--repeat", "1"}), dir, dir / "pids");
  auto e = g.wait(60);
  INFO(e.out << e.err);
  CHECK(e.code == 0);
  Lines l = read_lines(results);
  CHECK(l.torn == 1);            // the cut line, on a line of its own
  CHECK(l.metas.size() == 2);    // not glued to the new session's meta record
  REQUIRE(l.runs.size() == 1);
  CHECK(l.runs[0]["status"] == "ok");
}

TEST_CASE("bad command lines get a clear message and exit status 2", "[e2e][reliability]") {
  const std::string cfg = kFixtures + "faults_slow.toml";
  struct Bad {
    std::vector<std::string> args;
    std::vector<std::string> says;
  };
  const std::vector<Bad> cases = {
      {{"run", "--bogus", cfg}, {"--bogus"}},
      {{"run", "/nonexistent/x.toml"}, {"/nonexistent/x.toml", "does not exist"}},
      {{"run", "/tmp"}, {"/tmp", "directory"}},
      {{"check", "/nonexistent/x.toml"}, {"/nonexistent/x.toml", "cannot read"}},
      {{}, {"Usage: gilhost", "SUBCOMMAND", "run"}},  // the usage, not CLI11's "A subcommand is required"
      {{"frobnicate"}, {"unknown command 'frobnicate'", "run"}},
      {{"run"}, {"run what?", "-m MODULE"}},
      {{"run", cfg, "--repeat", "0"}, {"--repeat", "whole number of at least 1"}},
      {{"run", cfg, "--repeat", "many"}, {"--repeat", "many"}},
      {{"run", cfg, "--timeout", "soon"}, {"--timeout", "'soon'", "number of seconds"}},
      {{"run", cfg, "--timeout", "-1"}, {"--timeout", "number of seconds"}},
      {{"run", cfg, "--warmup", "-1"}, {"--warmup", "at least 0"}},
      {{"run", cfg, "--repeat"}, {"--repeat"}},
      {{"run", cfg, "--quick", "--profile", "x"}, {"--quick", "--profile"}},
      {{"run", cfg, "--profile", "nope"}, {"faults_slow.toml:", "no profile 'nope'"}},
      {{"run", cfg, "-p", "9.99"}, {"no interpreter", "9.99"}},
      {{"run", cfg, "-o", "/proc/version/r.jsonl", "-n"}, {}},  // a dry run writes nothing: fine
      {{"run", cfg, "-o", "/proc/version/r.jsonl", "--repeat", "1"}, {"gilhost:", "/proc/version"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv{kGilhost};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = gilhost::run_capture(argv, 120);
    INFO("gilhost " << gilhost::join(c.args, " ") << "\nstdout: " << r.out << "\nstderr: " << r.err);
    if (c.says.empty()) {
      CHECK(r.exit_code == 0);
      continue;
    }
    CHECK(r.exit_code == 2);
    for (const auto& s : c.says) CHECK(r.err.find(s) != std::string::npos);
    CHECK(r.err.size() < 2000);  // a message, not a dump
  }
}

TEST_CASE("bad TOML gets file:line:column messages and exit status 2, from check and run alike",
          "[e2e][reliability]") {
  TempDir dir;
  const std::string syntax = kFixtures + "faults_bad_syntax.toml";
  const std::string types = kFixtures + "faults_bad_types.toml";
  auto c = gilhost::run_capture({kGilhost, "check", syntax}, 30);
  CHECK(c.exit_code == 2);
  CHECK(c.err.find(syntax + ":5:28: error: ") != std::string::npos);

  c = gilhost::run_capture({kGilhost, "check", types}, 30);
  INFO(c.err);
  CHECK(c.exit_code == 2);
  for (const char* where : {":4:10: error: 'repeat' must be an integer", ":5:11: error: 'timeout' must be more",
                            ":6:22: error: 'sample_interval_ms' must be from 1 to 60000", ":7:16: error: 'interpreters' is empty",
                            ":8:1: error: unknown key 'colour'", ":13:1: error: case 'both': give either",
                            ":21:7: error: gil must be", ":22:21: error: sweep.seconds must be",
                            ":24:10: error: status must be one of"})
    CHECK(c.err.find(types + where) != std::string::npos);
  CHECK(c.err.find("error: profile 'quick' names unknown case 'missing'") != std::string::npos);

  // run says the same and starts nothing: no results file.
  auto r = gilhost::run_capture({kGilhost, "run", types, "-o", dir / "r.jsonl"}, 60);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(types + ":4:10: error: 'repeat' must be an integer") != std::string::npos);
  CHECK(!fs::exists(dir / "r.jsonl"));

  // Files that are hardly TOML at all.
  const std::vector<std::pair<std::string, std::string>> odd = {
      {"empty.toml", ""},
      {"binary.toml", std::string("\x00\xff\xfe\x01[experiment]\n", 17)},
      {"not_utf8.toml", "[experiment]\nscript = \"\xff\xfe\"\n"},
      {"table_case.toml", "[experiment]\nscript = \"x.py\"\n[case]\nname = \"a\"\n"},
      {"dup.toml", "[experiment]\nscript = \"a.py\"\nscript = \"b.py\"\n"},
      {"huge_int.toml", "[experiment]\nrepeat = 99999999999999999999\n"},
      {"deep.toml", "x = " + std::string(5000, '[') + std::string(5000, ']') + "\n"},
  };
  for (const auto& [name, text] : odd) {
    const std::string path = dir / name;
    {
      std::ofstream f(path, std::ios::binary);
      f << text;
    }
    auto k = gilhost::run_capture({kGilhost, "check", path}, 30);
    INFO(name << ": " << k.err);
    CHECK(k.exit_code == 2);
    CHECK(k.err.rfind(path + ":", 0) == 0);  // every message starts with file:line:column
    CHECK(k.err.find(": error: ") != std::string::npos);
  }
}

TEST_CASE("NaN, infinities and integers beyond 64 bits reach the results file and the report; a closed or "
          "garbled event channel is an error with its cause", "[e2e][reliability][outcomes]") {
  const Build b = newest();
  for (const bool exec_mode : {false, true}) {
    DYNAMIC_SECTION((exec_mode ? "exec mode" : "embed mode")) {
      TempDir dir;
      const std::string results = dir / "r.jsonl";
      Gilhost g(run_args("faults_outcomes.toml", {b}, results, mode_flags(exec_mode)), dir, dir / "pids");
      auto e = g.wait(120);
      INFO(e.out << e.err);
      REQUIRE(!e.hung);
      // Every expectation held; closed_below_1024 keeps its result only where the runner could keep its
      // pipes at 1024 and above.
      CHECK(e.code == (room_above_1024() ? 0 : 1));
      Lines l = read_lines(results);
      CHECK(l.torn == 0);
      auto result_of = [&](const std::string& c) {
        const json* r = l.find(c);
        REQUIRE(r);
        INFO(c << ": " << r->dump());
        CHECK((*r)["status"] == "ok");
        CHECK((*r)["has_result"] == true);
        return (*r)["result"];
      };
      CHECK(result_of("nan") == json{{"$float", "nan"}});
      CHECK(result_of("minus_inf") == json{{"$float", "-inf"}});
      CHECK(result_of("big") == json{{"$int", "1" + std::string(400, '0')}});
      CHECK(result_of("dict_inf") == json{{"x", {{"$float", "inf"}}}});
      CHECK(result_of("huge") == json{{"$int", "1" + std::string(5000, '0')}});
      if (room_above_1024()) CHECK(result_of("closed_below_1024") == "closed");

      const json* closed = l.find("closed_fds");
      REQUIRE(closed);
      CHECK((*closed)["status"] == "error");
      CHECK((*closed)["note"].get<std::string>().find(
                "the event channel closed before the case was reported (did the script close fd 3?)") == 0);
      const json* returned = l.find("closed_fds_and_returned");
      REQUIRE(returned);
      CHECK((*returned)["status"] == "error");
      CHECK((*returned)["note"].get<std::string>().find("fd 3") != std::string::npos);
      const json* garbage = l.find("event_garbage");
      REQUIRE(garbage);
      CHECK((*garbage)["status"] == "error");
      CHECK((*garbage)["note"].get<std::string>().find("could not be read (the first: '{not an event': not a JSON object)") !=
            std::string::npos);

      // The report shows them as numbers.
      auto r = gilhost::run_capture({kGilhost, "report", results}, 60);
      INFO(r.out << r.err);
      CHECK(r.exit_code == 0);
      for (const char* shown : {"nan", "-inf", "1.0e400", "{\"x\":inf}", "1.0e5000"})
        CHECK(r.out.find(shown) != std::string::npos);
    }
  }
}

TEST_CASE("report refuses a newer format, a run record without its fields, and a file with no record",
          "[e2e][reliability][report]") {
  TempDir dir;
  struct Bad {
    std::string name, text, says;
  };
  const std::vector<Bad> cases = {
      {"newer.jsonl", "{\"type\":\"meta\",\"format\":999}\n{\"type\":\"run\"}\n",
       "newer.jsonl:1: results format 999 is not one this gilhost reads"},
      {"fieldless.jsonl", "{\"type\":\"meta\",\"format\":1}\n{\"type\":\"run\"}\n",
       "fieldless.jsonl:2: a run record without \"experiment\", \"case\""},
      {"random.jsonl", "\x9c\x04\xf1 garbage\x01\n\xff\xfe{[\n", "random.jsonl: no gilhost record in it"},
  };
  for (const auto& c : cases) {
    {
      std::ofstream f(dir / c.name, std::ios::binary);
      f << c.text;
    }
    for (const char* command : {"report", "export"}) {
      auto r = gilhost::run_capture({kGilhost, command, dir / c.name}, 60);
      INFO(command << " " << c.name << "\nstdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err.find(c.says) != std::string::npos);
    }
  }
}

TEST_CASE("kill -9 of gilhost takes the child's whole process group with it, grandchildren included",
          "[e2e][reliability]") {
  const Build b = newest();
  for (const bool exec_mode : {false, true}) {
    DYNAMIC_SECTION((exec_mode ? "exec mode" : "embed mode")) {
      TempDir dir;
      const std::string pids = dir / "pids";
      std::vector<std::string> options = mode_flags(exec_mode);
      // The case closes fds 3-1023 first, as daemon code does: the watch pipe's copy above them holds.
      if (room_above_1024()) options.insert(options.end(), {"--profile", "closed"});
      Gilhost g(run_args("faults_grandchild.toml", {b}, dir / "r.jsonl", options), dir, pids);
      // The case has started its `sleep 600` and replaced its signal handlers.
      REQUIRE(wait_until([&] { return read_pids(pids).size() >= 1; }, 60));
      sleep_s(0.2);
      const pid_t grandchild = read_pids(pids).front();
      REQUIRE(proc_state(grandchild) != 0);
      ::kill(g.pid, SIGKILL);
      auto e = g.wait(20);
      CHECK(e.signal == SIGKILL);
      Leftovers left = leftovers(pids, 3.0);
      INFO("still alive: " << left.recorded_alive.size() << " recorded, " << left.orphans.size() << " orphans");
      CHECK(left.none());
    }
  }
}
