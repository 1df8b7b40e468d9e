#include "util/clock.hpp"

#include <ctime>

namespace gilhost {

namespace {
std::int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
}  // namespace

std::int64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
std::int64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

std::int64_t timeval_ns(const timeval& tv) {
  return static_cast<std::int64_t>(tv.tv_sec) * 1000000000LL + static_cast<std::int64_t>(tv.tv_usec) * 1000LL;
}

CpuUsage CpuUsage::now() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  CpuUsage u;
  u.user_ns = timeval_ns(self.ru_utime);
  u.sys_ns = timeval_ns(self.ru_stime);
  u.children_user_ns = timeval_ns(children.ru_utime);
  u.children_sys_ns = timeval_ns(children.ru_stime);
  u.voluntary_switches = self.ru_nvcsw + children.ru_nvcsw;
  u.involuntary_switches = self.ru_nivcsw + children.ru_nivcsw;
  u.max_rss_kb = self.ru_maxrss;
  return u;
}

}  // namespace gilhost
