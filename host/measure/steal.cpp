#include "measure/steal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gilhost {

void StealSeries::add(std::int64_t t_ns, const StatTimes& times) {
  const Point now{t_ns, times};
  if (points.empty()) {
    points.push_back(now);
  } else if (times.steal_ns != (has_last_ ? last_ : points.back()).times.steal_ns) {
    // The steal moved between the last reading and this one: both kept, so the rise lies between them.
    if (has_last_ && last_.t_ns > points.back().t_ns) points.push_back(last_);
    points.push_back(now);
  }
  last_ = now;
  has_last_ = true;
  if (points.size() > kMaxPoints) {
    std::size_t kept = 1;
    for (std::size_t i = 2; i + 1 < points.size(); i += 2) points[kept++] = points[i];
    points[kept++] = points.back();
    points.resize(kept);
  }
}

void StealSeries::close() {
  if (has_last_ && !points.empty() && last_.t_ns > points.back().t_ns) points.push_back(last_);
}

StatTimes StealSeries::at(std::int64_t t_ns) const {
  if (t_ns <= points.front().t_ns) return points.front().times;
  if (t_ns >= points.back().t_ns) return points.back().times;
  const auto after = std::upper_bound(points.begin(), points.end(), t_ns,
                                      [](std::int64_t t, const Point& p) { return t < p.t_ns; });
  const Point& b = *after;
  const Point& a = *(after - 1);
  const double f = static_cast<double>(t_ns - a.t_ns) / static_cast<double>(b.t_ns - a.t_ns);
  auto between = [f](std::int64_t x, std::int64_t y) { return x + static_cast<std::int64_t>(f * static_cast<double>(y - x)); };
  return {between(a.times.steal_ns, b.times.steal_ns), between(a.times.busy_ns, b.times.busy_ns)};
}

std::int64_t StealSeries::stolen_while_running(std::int64_t a_ns, std::int64_t b_ns, std::int64_t cpu_ns) const {
  const double s = std::min(0.5, running_share(a_ns, b_ns));
  return s > 0 ? static_cast<std::int64_t>(static_cast<double>(cpu_ns) * s / (1 - s)) : 0;
}

double StealSeries::running_share(std::int64_t a_ns, std::int64_t b_ns) const {
  if (points.size() < 2 || b_ns < a_ns) return 0.0;
  const std::int64_t widen = std::max<std::int64_t>(0, (kWindowNs - (b_ns - a_ns)) / 2);
  const StatTimes from = at(a_ns - widen), to = at(b_ns + widen);
  const double stolen = static_cast<double>(to.steal_ns - from.steal_ns);
  const double wanted = stolen + static_cast<double>(to.busy_ns - from.busy_ns);
  if (stolen <= 0 || wanted <= 0) return 0.0;
  const double share = stolen / wanted;
  return share >= kMinShare ? std::min(share, 1.0) : 0.0;
}

std::optional<double> StealSeries::run_share() const {
  if (cpus <= 0 || points.size() < 2) return std::nullopt;
  const Point &a = points.front(), &b = points.back();
  if (b.t_ns <= a.t_ns) return std::nullopt;
  const double stolen = static_cast<double>(b.times.steal_ns - a.times.steal_ns);
  return std::clamp(stolen / (static_cast<double>(cpus) * static_cast<double>(b.t_ns - a.t_ns)), 0.0, 1.0);
}

std::optional<StatTimes> parse_stat_times(const char* text, long ticks_per_second) {
  if (std::strncmp(text, "cpu ", 4) != 0 || ticks_per_second <= 0) return std::nullopt;
  const char* at = text + 4;
  long long column[8] = {};  // user nice system idle iowait irq softirq steal
  for (long long& value : column) {
    char* end = nullptr;
    value = std::strtoll(at, &end, 10);
    if (end == at) return std::nullopt;
    at = end;
  }
  const long long tick_ns = 1'000'000'000 / ticks_per_second;
  return StatTimes{column[7] * tick_ns, (column[0] + column[1] + column[2] + column[5] + column[6]) * tick_ns};
}

namespace {
// /proc/stat and the two numbers its reading needs, once a process: a run's sampler made them anew, and on a
// slow VM the open, the close and sysconf's read of /sys/devices/system/cpu/online cost ~40 us a run
// (docs/performance.md, "The orchestrator's own CPU"). A pread at offset 0 needs no lock.
struct ProcStatFile {
  UniqueFd fd{::open("/proc/stat", O_RDONLY | O_CLOEXEC)};
  long hz = ::sysconf(_SC_CLK_TCK);
  int cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
};

const ProcStatFile& proc_stat_file() {
  static const ProcStatFile file;
  return file;
}
}  // namespace

void StealReader::read(std::int64_t t_ns, StealSeries& into, bool force) {
  if (failed_ || (read_once_ && !force && t_ns - last_ns_ < kMinGapNs)) return;
  const ProcStatFile& file = proc_stat_file();
  into.cpus = file.cpus;
  char buf[512];
  const ssize_t n = file.fd ? ::pread(file.fd.get(), buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) {
    failed_ = true;
    return;
  }
  buf[n] = '\0';
  const std::optional<StatTimes> times = parse_stat_times(buf, file.hz);
  if (!times) {
    failed_ = true;
    return;
  }
  into.add(t_ns, *times);
  read_once_ = true;
  last_ns_ = t_ns;
}

}  // namespace gilhost
