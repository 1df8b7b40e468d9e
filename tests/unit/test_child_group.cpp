// run/child_group: the owner of a child's process group kills and reaps it, holds the watch pipe, and is
// found by kill_active() (what the signal handlers call) exactly while it lives.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "helpers.hpp"
#include "run/child_group.hpp"
#include "util/fd.hpp"

using gilhost::ChildGroup;

namespace {

// A child leading a group of its own with a grandchild in it, both sleeping: {leader, grandchild}.
std::pair<pid_t, pid_t> spawn_group() {
  gilhost::Pipe p = gilhost::make_pipe();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(p.write.get(), 1);
    ::execl("/bin/sh", "sh", "-c", "sleep 30 & echo $!; exec sleep 30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  p.write.reset();
  std::string line;
  char c = 0;
  while (::read(p.read.get(), &c, 1) == 1 && c != '\n') line += c;
  return {pid, static_cast<pid_t>(std::stol(line))};
}

bool reaped(pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) < 0 && errno == ECHILD; }

}  // namespace

TEST_CASE("ChildGroup: its end kills the whole group, reaps the leader and closes the watch pipe", "[child]") {
  const auto [leader, grandchild] = spawn_group();
  gilhost::Pipe watch = gilhost::make_pipe();
  {
    ChildGroup group(leader, std::move(watch.write));
    CHECK(group.owns_group());
    CHECK_FALSE(group.reaped());
  }
  CHECK(reaped(leader));
  CHECK(gilhost_test::process_gone(grandchild));
  char c = 0;
  CHECK(::read(watch.read.get(), &c, 1) == 0);  // EOF: the write end was the group's to close
}

TEST_CASE("ChildGroup: kill_active reaches the live groups, and only those", "[child]") {
  const auto [leader, grandchild] = spawn_group();
  {
    ChildGroup group(leader);
    ChildGroup::kill_active();
    int status = 0;
    rusage usage{};
    for (int i = 0; i < 2000 && !group.try_reap(status, usage); ++i) ::usleep(1000);
    REQUIRE(group.reaped());
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK(gilhost_test::process_gone(grandchild));
  }
  // Once its owner is gone, a group is nobody's to kill: a later group outside any ChildGroup survives.
  const auto [other, other_grandchild] = spawn_group();
  ChildGroup::kill_active();
  CHECK_FALSE(gilhost_test::process_gone(other, 100));
  ::kill(-other, SIGKILL);
  ::waitpid(other, nullptr, 0);
  CHECK(gilhost_test::process_gone(other_grandchild));
}

TEST_CASE("ChildGroup: an empty one owns nothing", "[child]") {
  ChildGroup none;
  CHECK_FALSE(none.owns_group());
  ChildGroup failed_spawn(-1);
  CHECK_FALSE(failed_spawn.owns_group());
  none.kill();  // nothing to kill: no signal to ourselves or to group 0
}
