#include "measure/perf_ring.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace gilhost {

int perf_event_open(perf_event_attr& attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, pid, cpu, group, flags));
}

namespace {
std::string paranoid_level() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return in >> level ? level : "?";
}
}  // namespace

std::string perf_open_failure(int err, const std::string& needs) {
  if (err == EACCES || err == EPERM)
    return "perf events are not allowed (kernel.perf_event_paranoid is " + paranoid_level() + "; " + needs + ")";
  return std::string("perf_event_open failed: ") + std::strerror(err);
}

void PerfRing::unmap() {
  if (base_) ::munmap(base_, length_);
  base_ = nullptr;
}

PerfRing map_perf_ring(int fd, std::size_t max_bytes, std::string& why_not) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  for (std::size_t data = std::max<std::size_t>(4, max_bytes / page); data >= 4; data /= 2) {
    const std::size_t length = (1 + data) * page;
    void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED) return PerfRing(base, length);
    why_not = std::string("the perf buffers could not be mapped: ") + std::strerror(errno) +
              " (kernel.perf_event_mlock_kb limits them for unprivileged users)";
  }
  return PerfRing();
}

}  // namespace gilhost
