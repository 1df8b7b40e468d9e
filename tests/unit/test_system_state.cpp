// measure/system_state and util/session_lock: what a session records about the machine, what it warns
// about, and the one-session-per-machine lock.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "helpers.hpp"
#include "measure/system_state.hpp"
#include "util/session_lock.hpp"

using gilhost::SessionLock;
using gilhost::SystemState;

TEST_CASE("system state: read from /proc and /sys as the kernel writes them", "[system_state]") {
  gilhost_test::TempDir root;
  const auto cpu = root / "sys/devices/system/cpu";
  gilhost_test::write_file(root / "proc/loadavg", "1.50 0.75 0.25 3/200 12345\n");
  gilhost_test::write_file(root / "proc/sys/kernel/randomize_va_space", "2\n");
  gilhost_test::write_file(cpu / "cpu0/cpufreq/scaling_governor", "powersave\n");
  gilhost_test::write_file(cpu / "cpu0/cpufreq/scaling_cur_freq", "2400000\n");
  gilhost_test::write_file(cpu / "cpu1/cpufreq/scaling_cur_freq", "3100000\n");
  gilhost_test::write_file(cpu / "intel_pstate/no_turbo", "1\n");
  gilhost_test::write_file(cpu / "isolated", "2-3\n");
  const SystemState s = gilhost::read_system_state(root.path().string());
  CHECK(s.governor == "powersave");
  REQUIRE(s.turbo);
  CHECK_FALSE(*s.turbo);  // no_turbo = 1
  CHECK(s.aslr == 2);
  CHECK(s.load_1m == Approx(1.5));
  CHECK(s.load_15m == Approx(0.25));
  CHECK(s.cpu_mhz == std::vector<double>{2400.0, 3100.0});
  CHECK(s.isolated_cpus == "2-3");
  CHECK(s.to_json()["turbo"] == false);

  // A VM: no cpufreq, frequencies from /proc/cpuinfo, nothing guessed.
  gilhost_test::TempDir vm;
  gilhost_test::write_file(vm / "proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2596.152\nprocessor\t: 1\ncpu MHz\t\t: 2596.152\n");
  const SystemState v = gilhost::read_system_state(vm.path().string());
  CHECK(v.governor.empty());
  CHECK_FALSE(v.turbo);
  CHECK(v.cpu_mhz.size() == 2);
  CHECK(v.to_json()["turbo"].is_null());
}

TEST_CASE("system state: warnings for a busy machine and a drifting clock", "[system_state]") {
  SystemState s;
  s.cores = 2;
  s.load_1m = 0.9;
  CHECK(gilhost::quiet_machine_warnings(s).empty());
  s.load_1m = 1.6;
  s.governor = "powersave";
  const auto w = gilhost::quiet_machine_warnings(s);
  REQUIRE(w.size() == 2);
  CHECK(w[0].find("load average is 1.60 on 2 usable cores") != std::string::npos);
  CHECK(w[1].find("'powersave'") != std::string::npos);
  s.governor = "performance";
  CHECK(gilhost::quiet_machine_warnings(s).size() == 1);
}

TEST_CASE("session lock: a second session waits, told for whom, until the first ends", "[session_lock]") {
  gilhost_test::TempDir dir;
  const std::string path = (dir / "cache/session.lock").string();
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {  // the first session: holds the lock for 300 ms
    ::close(pipe_fds[0]);
    auto lock = SessionLock::acquire(path, "pid 1: gilhost run configs/race.toml", nullptr);
    (void)!::write(pipe_fds[1], "x", 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::_exit(lock.valid() ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  char c;
  REQUIRE(::read(pipe_fds[0], &c, 1) == 1);  // the child holds it now
  ::close(pipe_fds[0]);

  CHECK_FALSE(SessionLock::try_acquire(path, "me").valid());
  std::string told;
  const auto t0 = std::chrono::steady_clock::now();
  auto lock = SessionLock::acquire(path, "pid 2: gilhost run configs/stall.toml", [&](const std::string& other) { told = other; });
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(lock.valid());
  CHECK(told == "pid 1: gilhost run configs/race.toml");
  CHECK(waited > std::chrono::milliseconds(100));
  int status = 0;
  REQUIRE(::waitpid(holder, &status, 0) == holder);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // While we hold it, the next one is told about us.
  CHECK_FALSE(SessionLock::try_acquire(path, "third").valid());
  CHECK(gilhost::read_file(path) == "pid 2: gilhost run configs/stall.toml\n");
}
