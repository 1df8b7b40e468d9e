#pragma once
// Host clocks: CLOCK_MONOTONIC (the clock behind Python's time.monotonic_ns) and getrusage. The ground
// floor: it includes nothing of gilhost.
#include <sys/resource.h>

#include <cstdint>

namespace gilhost {

std::int64_t monotonic_ns();
std::int64_t realtime_ns();

// CPU time and context switches of this process and of its waited-for children.
struct CpuUsage {
  std::int64_t user_ns = 0;
  std::int64_t sys_ns = 0;
  std::int64_t children_user_ns = 0;
  std::int64_t children_sys_ns = 0;
  long voluntary_switches = 0;
  long involuntary_switches = 0;
  long max_rss_kb = 0;  // kernel high-water mark of this process (ru_maxrss)

  static CpuUsage now();
  std::int64_t total_ns() const { return user_ns + sys_ns + children_user_ns + children_sys_ns; }
};

std::int64_t timeval_ns(const timeval& tv);

}  // namespace gilhost
