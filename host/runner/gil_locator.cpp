#include "runner/gil_locator.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "util/clock.hpp"
#include "util/fd.hpp"

namespace gilhost {

namespace {

constexpr std::int64_t kPatienceNs = 200000000;  // a helper not seen waiting by then: not located

// The futex word `tid` is blocked on, or 0 when it is not in a futex wait.
std::uint64_t futex_wait_of(int fd) {
  char buf[256];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = 0;
  char* end = nullptr;
  const long nr = std::strtol(buf, &end, 10);
  if (end == buf || nr != SYS_futex) return 0;
  const std::uint64_t word = std::strtoull(end, &end, 16);
  const std::uint64_t op = std::strtoull(end, nullptr, 16) & FUTEX_CMD_MASK;
  return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET ? word : 0;
}

void pause_briefly() {
  const timespec ts{0, 50000};
  ::nanosleep(&ts, nullptr);
}

}  // namespace

protocol::GilEvent locate_gil(const py::Api& api, std::int64_t interpreter) {
  protocol::GilEvent event;
  event.interpreter = interpreter;
  event.has_gil = true;
  if (!api.has_thread_states()) {
    event.note = "this libpython lacks PyThreadState_New or PyThreadState_DeleteCurrent";
    return event;
  }
  py::PyInterpreterState* interp = api.PyInterpreterState_Get();
  std::atomic<pid_t> helper_tid{0};
  std::atomic<bool> took_it{false};
  std::thread helper([&] {
    helper_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    py::PyThreadState* state = api.PyThreadState_New(interp);
    api.PyEval_RestoreThread(state);  // blocks while we hold the GIL, if there is one
    took_it = true;
    api.PyThreadState_Clear(state);
    api.PyThreadState_DeleteCurrent();
  });
  while (helper_tid == 0) std::this_thread::yield();
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/syscall", static_cast<int>(helper_tid.load()));
  UniqueFd syscall_file(::open(path, O_RDONLY | O_CLOEXEC));
  std::uint64_t word = 0;
  const std::int64_t deadline = monotonic_ns() + kPatienceNs;
  while (syscall_file && !took_it && monotonic_ns() < deadline) {
    if ((word = futex_wait_of(syscall_file.get())) != 0) break;
    pause_briefly();
  }
  const bool without_waiting = took_it.load();
  event.helper_tid = helper_tid.load();
  {
    py::GilRelease released(api);  // let the helper through, then take the GIL back
    helper.join();
  }
  if (without_waiting) {
    event.has_gil = false;
  } else if (word != 0) {
    event.futex_lo = word - kGilWindowBelow;
    event.futex_hi = word + kGilWindowAbove;
  } else {
    event.note = syscall_file ? "a thread waiting for it was not seen in a futex wait within 200 ms"
                              : "cannot read /proc/self/task/TID/syscall";
  }
  return event;
}

}  // namespace gilhost
