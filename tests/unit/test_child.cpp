// run/child: run_child on /bin/sh commands (exit codes, signals, timeouts, output, events, leftovers).
#include <catch2/catch.hpp>

#include <signal.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "helpers.hpp"
#include "run/child.hpp"
#include "run/run_cgroup.hpp"
#include "util/clone_into_cgroup.hpp"
#include "util/clock.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

using gilhost::ChildRequest;
using gilhost::ChildResult;

namespace {

ChildRequest sh(const std::string& script, double timeout_s = 20) {
  ChildRequest req;
  req.argv = {"/bin/sh", "-c", script};
  req.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  req.timeout_s = timeout_s;
  req.sample_interval_ms = 5;
  return req;
}

// The pids a script printed, one a line.
std::vector<pid_t> pids_in(const std::string& text) {
  std::vector<pid_t> out;
  for (const auto& line : gilhost::split(text, '\n'))
    if (!gilhost::trim(line).empty()) out.push_back(static_cast<pid_t>(std::stol(line)));
  return out;
}

}  // namespace

TEST_CASE("run_child: exit codes", "[child]") {
  ChildResult ok = gilhost::run_child(sh("exit 0"));
  CHECK(ok.spawn_error.empty());
  CHECK(ok.pid > 0);
  CHECK(ok.exited);
  CHECK(ok.exit_code == 0);
  CHECK(ok.signal == 0);
  CHECK_FALSE(ok.timed_out);
  CHECK_FALSE(ok.interrupted);
  CHECK(ok.leftover_processes == 0);
  CHECK(ok.wall_ns() > 0);
  // (How many samples a run this short gets depends on scheduling: only that the summary is there.)
  REQUIRE(ok.sampling);
  CHECK(ok.sampling->idle_check.has_value());

  ChildResult code = gilhost::run_child(sh("echo out; echo err >&2; exit 42"));
  CHECK(code.exited);
  CHECK(code.exit_code == 42);
  CHECK(code.stdout_text == "out\n");
  CHECK(code.stderr_text == "err\n");
  CHECK(code.stdout_bytes == 4);
  CHECK(code.stderr_bytes == 4);
}

TEST_CASE("run_child: the environment is exactly the request's", "[child]") {
  ChildRequest req = sh("echo \"$GILHOST_TEST_VALUE|${HOME:-unset}\"");
  req.env.push_back("GILHOST_TEST_VALUE=héllo world");
  ChildResult r = gilhost::run_child(req);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "héllo world|unset\n");
}

TEST_CASE("run_child: death by a signal is reported as the signal", "[child]") {
  ChildResult r = gilhost::run_child(sh("ulimit -c 0; kill -SEGV $$; sleep 5"));
  CHECK_FALSE(r.exited);
  CHECK(r.exit_code == -1);
  CHECK(r.signal == SIGSEGV);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("run_child: a timeout kills the whole process group", "[child]") {
  // A background grandchild in the group, and the shell itself, both sleep far past the timeout.
  ChildResult r = gilhost::run_child(sh("sleep 30 & echo $!; sleep 30", 0.3));
  CHECK(r.timed_out);
  CHECK_FALSE(r.exited);
  CHECK(r.signal == SIGKILL);
  auto pids = pids_in(r.stdout_text);
  REQUIRE(pids.size() == 1);
  CHECK(gilhost_test::process_gone(pids[0]));
  CHECK(gilhost_test::process_gone(r.pid));
  gilhost::reap_orphans();
}

TEST_CASE("run_child: an interrupt kills the tree and keeps what was read", "[child]") {
  std::atomic<bool> interrupt{true};
  ChildRequest req = sh("sleep 30");
  req.interrupt = &interrupt;
  ChildResult r = gilhost::run_child(req);
  CHECK(r.interrupted);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == SIGKILL);
}

TEST_CASE("run_child: output capture is bounded, and the size still counted", "[child]") {
  ChildRequest req = sh("head -c 5000000 /dev/zero | tr '\\000' x; echo done >&2");
  req.head_limit = 4096;
  req.tail_limit = 1024;
  ChildResult r = gilhost::run_child(req);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_bytes == 5000000);
  const std::string marker = "\n[... " + std::to_string(5000000 - 4096 - 1024) + " bytes not kept ...]\n";
  CHECK(r.stdout_text.size() == 4096 + marker.size() + 1024);
  CHECK(r.stdout_text == std::string(4096, 'x') + marker + std::string(1024, 'x'));
  CHECK(r.stderr_text == "done\n");
}

TEST_CASE("BoundedCapture: head, tail, and what falls between", "[child]") {
  gilhost::BoundedCapture small(4, 3);
  small.append("abc", 3);
  CHECK_FALSE(small.truncated());
  CHECK(small.text() == "abc");
  small.append("defg", 4);  // 7 bytes: "abcd" + "efg", all kept
  CHECK_FALSE(small.truncated());
  CHECK(small.text() == "abcdefg");
  small.append("hi", 2);
  CHECK(small.truncated());
  CHECK(small.total() == 9);
  CHECK(small.text() == "abcd\n[... 2 bytes not kept ...]\nghi");

  gilhost::BoundedCapture chunks(2, 2);
  for (char c : std::string("0123456789")) chunks.append(&c, 1);
  CHECK(chunks.text() == "01\n[... 6 bytes not kept ...]\n89");
  gilhost::BoundedCapture one_big(2, 2);
  one_big.append("0123456789", 10);
  CHECK(one_big.text() == chunks.text());
}

TEST_CASE("run_child: events are JSON lines on fd 3, decoded as they arrive", "[child]") {
  ChildResult r = gilhost::run_child(
      sh("echo '{\"event\":\"ready\",\"pid\":7,\"init_ns\":5}' >&3; echo 'not json' >&3; "
         "printf '{\"event\":\"finalized\",' >&3; printf '\"finalize_ns\":9,\"status\":0}\\n' >&3; "
         "echo '[1,2]' >&3; echo '{\"event\":\"end\"}' >&3"));
  CHECK(r.exit_code == 0);
  REQUIRE(r.events.ready);
  CHECK(r.events.ready->pid == 7);
  CHECK(r.events.ready->init_ns == 5);
  REQUIRE(r.events.finalized);  // one line written in two pieces
  CHECK(r.events.finalized->finalize_ns == 9);
  CHECK_FALSE(r.events.case_event);
  // Lines that are no event (not JSON, not an object, no event of the protocol) are counted, never
  // silently dropped.
  CHECK(r.events.unreadable == 3);
  CHECK(r.events.first_unreadable == "not json");
  CHECK_FALSE(r.events_closed_early);

  ChildRequest other_fd = sh("echo '{\"event\":\"error\",\"stage\":\"init\",\"message\":\"m\"}' >&5");
  other_fd.event_fd = 5;
  ChildResult r5 = gilhost::run_child(other_fd);
  CHECK(r5.exit_code == 0);
  REQUIRE(r5.events.runner_error);
  CHECK(r5.events.runner_error->stage == gilhost::protocol::RunnerStage::init);
  CHECK(r5.events.runner_error->message == "m");
}

TEST_CASE("run_child: a last event line cut short is unreadable, not lost", "[child]") {
  ChildResult r = gilhost::run_child(sh("printf '{\"event\":\"case\",\"n\":' >&3"));
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.events.case_event);
  CHECK(r.events.unreadable == 1);
  CHECK(r.events.first_unreadable == "{\"event\":\"case\",\"n\":");
}

TEST_CASE("run_child: an event pipe closed while the child runs on is told from an exit", "[child]") {
  ChildResult closed = gilhost::run_child(sh("exec 3>&-; sleep 0.3"));
  CHECK(closed.exit_code == 0);
  CHECK(closed.events_closed_early);
  CHECK(closed.event_fd == 3);

  ChildResult exited = gilhost::run_child(sh("echo '{\"event\":\"ready\"}' >&3"));
  CHECK(exited.exit_code == 0);
  CHECK_FALSE(exited.events_closed_early);
}

TEST_CASE("run_child: the watch pipe is the child's at watch_fd, and EOF there once we are done", "[child]") {
  // The child reads its watch fd in the background: nothing arrives while we run it (we never write).
  ChildRequest req = sh("if [ -e /proc/self/fd/4 ]; then echo open; fi; "
                        "timeout 0.3 cat <&4; echo \"read ended: $?\"");
  req.watch_fd = 4;
  ChildResult r = gilhost::run_child(req);
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "open\nread ended: 124\n");  // blocked until timeout: not EOF while we wait

  ChildResult none = gilhost::run_child(sh("if [ -e /proc/self/fd/4 ]; then echo open; else echo none; fi"));
  CHECK(none.stdout_text == "none\n");
}

TEST_CASE("run_child: processes left behind are counted and killed", "[child]") {
  SECTION("a background process in the group") {
    ChildResult r = gilhost::run_child(sh("sleep 30 >/dev/null 2>&1 & echo $!"));
    CHECK(r.exited);
    CHECK(r.exit_code == 0);
    CHECK(r.leftover_processes == 1);
    auto pids = pids_in(r.stdout_text);
    REQUIRE(pids.size() == 1);
    CHECK(gilhost_test::process_gone(pids[0]));
  }
  SECTION("a daemon in a session of its own") {
    // As the orchestrator does: orphans of a run are re-parented to us, so a setsid'd daemon whose
    // parent has exited is still found.
    gilhost::become_subreaper();
    ChildResult r = gilhost::run_child(sh("setsid sleep 30 >/dev/null 2>&1 & echo $!"));
    CHECK(r.exited);
    CHECK(r.exit_code == 0);
    CHECK(r.leftover_processes == 1);
    auto pids = pids_in(r.stdout_text);
    REQUIRE(pids.size() == 1);
    CHECK(gilhost_test::process_gone(pids[0]));
  }
  gilhost::reap_orphans();
}

TEST_CASE("run_child: a program that cannot run", "[child]") {
  ChildRequest req;
  req.argv = {"/nonexistent/gilhost-runner"};
  ChildResult r = gilhost::run_child(req);
  CHECK_THAT(r.spawn_error, Catch::Matchers::StartsWith("cannot execute /nonexistent/gilhost-runner"));
  CHECK(r.pid == 0);
}

TEST_CASE("run_child: exec_fd starts the program opened, whatever argv[0] names now", "[child]") {
  gilhost_test::TempDir dir;
  const std::string copy = (dir / "sh").string();
  std::filesystem::copy_file("/bin/sh", copy);
  gilhost::UniqueFd opened(::open(copy.c_str(), O_PATH | O_CLOEXEC));
  REQUIRE(opened);
  // Replaced as a linker replaces its output: unlinked, a file that cannot run in its place.
  REQUIRE(::unlink(copy.c_str()) == 0);
  std::ofstream(copy) << "not a program\n";
  ChildRequest req = sh("echo ran; exit 3");
  req.argv[0] = copy;
  ChildResult without = gilhost::run_child(req);
  CHECK(without.exit_code != 3);  // by its path, argv[0] no longer runs
  req.exec_fd = opened.get();
  ChildResult with = gilhost::run_child(req);
  CHECK(with.spawn_error.empty());
  CHECK(with.exit_code == 3);
  CHECK(with.stdout_text == "ran\n");
}

TEST_CASE("run_child: after_spawn runs once, between the spawn and the reap, and also when nothing was spawned",
          "[child]") {
  int calls = 0;
  std::int64_t called_at = 0;
  ChildRequest req = sh("sleep 0.2");
  req.after_spawn = [&] {
    ++calls;
    called_at = gilhost::monotonic_ns();
  };
  ChildResult r = gilhost::run_child(req);
  CHECK(calls == 1);
  CHECK(r.exited);
  CHECK(r.spawned_at_ns < called_at);
  CHECK(called_at < r.reaped_at_ns);

  ChildRequest missing = sh("exit 0");
  missing.argv[0] = "/nonexistent/gilhost-test-program";
  missing.after_spawn = [&] { ++calls; };
  ChildResult none = gilhost::run_child(missing);
  CHECK_FALSE(none.spawn_error.empty());
  CHECK(calls == 2);
}

namespace {

void exit_seven(void*) { ::_exit(7); }

// The cgroup a process is in, as /proc/PID/cgroup's v2 line says ("0::/path").
std::string cgroup_line(const std::string& proc_cgroup) {
  for (const auto& line : gilhost::split(proc_cgroup, '\n'))
    if (line.rfind("0::", 0) == 0) return line;
  return "";
}

}  // namespace

TEST_CASE("vfork_into_cgroup: the child runs and is reaped; a bad cgroup descriptor is refused", "[child][cgroup]") {
  const gilhost::RunCgroup& cgroup = gilhost::RunCgroup::session();
  if (cgroup.clone_dir_fd() < 0) {
    WARN("no session cgroup that clone3 can make children in here (none, killed, or no CLONE_INTO_CGROUP): "
         << cgroup.why_not());
    return;
  }
  // A directory that is not a cgroup: refused, and no child.
  const gilhost::UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  errno = 0;
  const pid_t refused = gilhost::vfork_into_cgroup(root.get(), exit_seven, nullptr);
  const int why = errno;
  CHECK(refused == -1);
  INFO("errno " << why);
  CHECK(why != 0);
  const pid_t pid = gilhost::vfork_into_cgroup(cgroup.clone_dir_fd(), exit_seven, nullptr);
  if (pid < 0 && errno == ENOSYS) {
    WARN("no clone3 here (or not on this CPU, or under a sanitizer): runs join their cgroup after vfork");
    return;
  }
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
}

// Each thread that spawns has its own stack for the child (a spawn suspends only its own thread): children
// made from four threads at once all run and exit as they should.
TEST_CASE("vfork_into_cgroup: children made from several threads at once", "[child][cgroup]") {
  const gilhost::RunCgroup& cgroup = gilhost::RunCgroup::session();
  if (cgroup.clone_dir_fd() < 0) {
    WARN("no session cgroup that clone3 can make children in here: " << cgroup.why_not());
    return;
  }
  std::atomic<int> exited_seven{0}, failed{0};
  std::vector<std::thread> spawners;
  for (int k = 0; k < 4; ++k)
    spawners.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        const pid_t pid = gilhost::vfork_into_cgroup(cgroup.clone_dir_fd(), exit_seven, nullptr);
        int status = 0;
        if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 7) ++exited_seven;
        else if (!(pid < 0 && errno == ENOSYS)) ++failed;
      }
    });
  for (auto& t : spawners) t.join();
  CHECK(failed == 0);
  if (exited_seven == 0) WARN("no clone3 here (or not on this CPU, or under a sanitizer): every call ENOSYS");
  else CHECK(exited_seven == 100);
}

TEST_CASE("run_child: the child is in the session's cgroup, and still starts once the cgroup was killed",
          "[child][cgroup]") {
  const gilhost::RunCgroup& cgroup = gilhost::RunCgroup::session();
  if (!cgroup.active()) {
    WARN("no session cgroup here: " << cgroup.why_not());
    return;
  }
  const std::string ours = "/gilhost-" + std::to_string(::getpid());
  ChildResult before = gilhost::run_child(sh("cat /proc/self/cgroup"));
  CHECK(before.exit_code == 0);
  CHECK(cgroup_line(before.stdout_text).find(ours) != std::string::npos);
  // After a cgroup.kill, a child clone3 made in the cgroup was killed at birth (Linux 6.18): children
  // are then made by vfork, and join.
  gilhost::RunCgroup::kill_active();
  CHECK(cgroup.clone_dir_fd() == -1);
  for (int i = 0; i < 3; ++i) {
    ChildResult after = gilhost::run_child(sh("cat /proc/self/cgroup"));
    INFO("run " << i << ": signal " << after.signal << ", stderr " << after.stderr_text);
    CHECK(after.exit_code == 0);
    CHECK(after.signal == 0);
    CHECK(cgroup_line(after.stdout_text).find(ours) != std::string::npos);
  }
}

namespace {
// How many descriptors this process has open now.
std::size_t open_descriptors() {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("run_child: the run's descriptors close when its result's last holder drops them", "[child]") {
  const std::size_t before = open_descriptors();
  ChildResult r = gilhost::run_child(sh("echo hi"));
  REQUIRE(r.exited);
  REQUIRE(r.descriptors);
  // The pipes' read ends, the pidfd, the epoll set and the sampler's files: still open, for a session to
  // close after its next spawn.
  CHECK(open_descriptors() > before);
  std::shared_ptr<void> kept = r.descriptors;
  r = ChildResult{};
  CHECK(open_descriptors() > before);  // a copy holds them
  const std::weak_ptr<void> watch = kept;
  kept.reset();
  CHECK(watch.expired());
  CHECK(open_descriptors() == before);  // all of them, nothing leaked
}

TEST_CASE("make_pipe_nonblocking_read: only the read end is non-blocking, both close-on-exec", "[child]") {
  gilhost::Pipe p = gilhost::make_pipe_nonblocking_read();
  CHECK((::fcntl(p.read.get(), F_GETFL) & O_NONBLOCK) != 0);
  CHECK((::fcntl(p.write.get(), F_GETFL) & O_NONBLOCK) == 0);
  CHECK((::fcntl(p.read.get(), F_GETFD) & FD_CLOEXEC) != 0);
  CHECK((::fcntl(p.write.get(), F_GETFD) & FD_CLOEXEC) != 0);
  char c;
  errno = 0;
  CHECK(::read(p.read.get(), &c, 1) == -1);  // empty: would block, and does not
  CHECK(errno == EAGAIN);
  gilhost::Pipe plain = gilhost::make_pipe();
  ::fcntl(plain.read.get(), F_SETFD, 0);
  gilhost::set_cloexec(plain.read.get());
  CHECK(::fcntl(plain.read.get(), F_GETFD) == FD_CLOEXEC);
}
