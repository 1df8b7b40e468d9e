#pragma once
// What /proc/PID/task/TID/syscall says, built by hand for the thread-state tests.
#include <cstdint>

#include "measure/thread_states.hpp"

namespace gilhost_test {

// Blocked in system call `nr` with its first two arguments.
inline gilhost::SyscallReading in_call(long nr, std::uint64_t a0, std::uint64_t a1) {
  gilhost::SyscallReading r;
  r.kind = gilhost::SyscallReading::Kind::in_syscall;
  r.number = static_cast<int>(nr);
  r.arg0 = a0;
  r.arg1 = a1;
  return r;
}

// On a CPU, or runnable.
inline gilhost::SyscallReading running() {
  gilhost::SyscallReading r;
  r.kind = gilhost::SyscallReading::Kind::running;
  return r;
}

}  // namespace gilhost_test
