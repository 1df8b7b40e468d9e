// measure/switch_watch: whether a run's threads have been on a CPU since the last look, from the kernel's
// switch records.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include "measure/switch_watch.hpp"
#include "util/clock.hpp"

using gilhost::SwitchWatch;
using Switch = SwitchWatch::Switch;

TEST_CASE("switch watch: records from several CPUs' buffers are applied in time order; an exit ends a thread",
          "[switch_watch]") {
  SwitchWatch w(100);
  CHECK(w.on_cpu() == 1);  // the root may be running as the watch starts, until its first record
  // Thread 101 ran on CPU 0 (in at 10, out at 20), then went on CPU 1 at 30: CPU 1's buffer read first.
  std::vector<Switch> records = {{30, 101, Switch::in}, {5, 100, Switch::out}, {10, 101, Switch::in}, {20, 101, Switch::out}};
  w.apply(records);
  CHECK(records.empty());
  CHECK(w.on_cpu() == 1);  // 101, on CPU 1
  // 101 ends on its CPU (its last switch-out is never recorded); 102 is preempted, off a CPU.
  records = {{50, 101, Switch::exit}, {40, 102, Switch::in}, {45, 102, Switch::out}};
  w.apply(records);
  CHECK(w.on_cpu() == 0);
  // An exit of a thread already off a CPU changes nothing.
  records = {{60, 102, Switch::exit}};
  w.apply(records);
  CHECK(w.on_cpu() == 0);
}

// A child that spins, counting in shared memory: whenever the count moved between two calls, the second
// call is not quiet (a thread cannot run without a switch-in, nor keep running with none recorded).
TEST_CASE("switch watch: a call after the tree ran is never quiet; a blocked tree is", "[switch_watch]") {
  auto* shared = static_cast<std::atomic<long>*>(
      ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  REQUIRE(shared != MAP_FAILED);
  std::atomic<long>& count = shared[0];
  std::atomic<long>& order = shared[1];  // 0: wait on the pipe; 1: spin; 2: end
  int go[2];
  REQUIRE(::pipe(go) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(1);  // blocked until the watch has started
    if (::read(go[0], &c, 1) != 1) ::_exit(1);  // and again: a blocked tree
    while (order.load() == 1) count.fetch_add(1);
    ::_exit(0);
  }
  std::string why_not;
  auto watch = SwitchWatch::start(child, why_not);
  if (!watch) {
    WARN("switch records not allowed here: " << why_not);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return;
  }
  REQUIRE(::write(go[1], "x", 1) == 1);
  bool quiet = false;
  for (int i = 0; i < 200 && !quiet; ++i) {  // it wakes, reads, blocks again: then quiet
    ::usleep(5000);
    quiet = watch->quiet(gilhost::monotonic_ns());
  }
  CHECK(quiet);
  CHECK(watch->on_cpu() == 0);
  CHECK(watch->quiet(gilhost::monotonic_ns()));  // nothing since

  order.store(1);
  REQUIRE(::write(go[1], "x", 1) == 1);
  long after_last = count.load();
  int calls_after_running = 0;
  for (int i = 0; i < 200; ++i) {
    ::usleep(1000);
    const long before = count.load();
    const bool q = watch->quiet(gilhost::monotonic_ns());
    if (before != after_last) {
      ++calls_after_running;
      INFO("call " << i << ": the count moved " << after_last << " -> " << before);
      CHECK_FALSE(q);
    }
    after_last = count.load();
  }
  CHECK(calls_after_running > 0);
  order.store(2);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  watch->quiet(gilhost::monotonic_ns());  // its last records: the exit
  CHECK_FALSE(watch->lost());
  if (watch->stopped_why().empty()) {
    CHECK(watch->on_cpu() == 0);
    CHECK(watch->quiet(gilhost::monotonic_ns()));
  } else {  // beside busy loops, each of this test's wake-ups can preempt the spinner: two switches
    INFO(watch->stopped_why());
    CHECK(watch->stopped_why().find("over 2,000 switches a second") != std::string::npos);
  }
  ::close(go[0]);
  ::close(go[1]);
  ::munmap(shared, 4096);
}

// A tree that switches thousands of times a second is busy (read every tick anyway) and pays ~0.25 us a
// switch for the records: the watch stops, closing its events.
TEST_CASE("switch watch: stops on a tree that switches over 2,000 times a second", "[switch_watch]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    for (;;) ::usleep(1);  // each a switch out and in: ~10,000 or more a second
  }
  std::string why_not;
  auto watch = SwitchWatch::start(child, why_not);
  if (!watch) {
    WARN("switch records not allowed here: " << why_not);
  } else {
    for (int i = 0; i < 400 && watch->stopped_why().empty(); ++i) {
      ::usleep(1000);
      CHECK_FALSE(watch->quiet(gilhost::monotonic_ns()));
    }
    INFO(watch->stopped_why());
    CHECK(watch->stopped_why().find("over 2,000 switches a second") != std::string::npos);
    CHECK_FALSE(watch->quiet(gilhost::monotonic_ns()));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}
