#include "measure/switch_watch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace gilhost {

namespace {

perf_event_attr switch_attr() {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof a;
  a.config = PERF_COUNT_SW_DUMMY;  // no sample, no count: the side-band records alone
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  a.sample_id_all = 1;
  a.context_switch = 1;
  a.task = 1;  // exits (a thread's last switch-out is not recorded: its events are gone by then)
  a.inherit = 1;
  a.exclude_kernel = 1;  // what perf_event_paranoid 2 allows an unprivileged user; the records still come
  a.exclude_hv = 1;
  a.use_clockid = 1;  // one clock for every CPU's buffer, so their records can be put in order
  a.clockid = CLOCK_MONOTONIC;
  return a;
}

}  // namespace

SwitchWatch::SwitchWatch(pid_t root) {
  on_[root] = true;
  on_cpu_ = 1;
}

std::unique_ptr<SwitchWatch> SwitchWatch::start(pid_t root, std::string& why_not) {
  auto watch = std::make_unique<SwitchWatch>(root);
  const long configured = std::max(1L, ::sysconf(_SC_NPROCESSORS_CONF));
  for (int cpu = 0; cpu < configured; ++cpu) {
    perf_event_attr attr = switch_attr();
    UniqueFd fd(perf_event_open(attr, root, cpu, -1, PERF_FLAG_FD_CLOEXEC));
    if (!fd) {
      if (errno == ENODEV && cpu > 0) continue;  // an offline CPU: nothing runs there
      why_not = perf_open_failure(errno, "the switch records need perf_event_paranoid 2 or less, or CAP_PERFMON");
      return nullptr;
    }
    // 32 KiB a CPU: about 1,000 switches between two ticks, where a 1 ms tick sees tens at most.
    PerfRing ring = map_perf_ring(fd.get(), 32u << 10, why_not);
    if (!ring.mapped()) return nullptr;
    watch->fds_.push_back(std::move(fd));
    watch->rings_.push_back(std::move(ring));
  }
  why_not.clear();
  return watch;
}

void SwitchWatch::decode(const unsigned char* rec, std::size_t size) {
  const auto header = record_field<perf_event_header>(rec, 0);
  seen_ = true;
  if (header.type == PERF_RECORD_LOST) lost_ = true;
  // SWITCH: the sample id alone (pid, tid, time). EXIT: pid, ppid, tid, ptid, time, then the sample id.
  if (header.type == PERF_RECORD_SWITCH && size >= 24) {
    const bool out = (header.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
    pending_.push_back({record_field<std::int64_t>(rec, 16), record_field<std::int32_t>(rec, 12), out ? Switch::out : Switch::in});
  } else if (header.type == PERF_RECORD_EXIT && size >= 32) {
    pending_.push_back({record_field<std::int64_t>(rec, 24), record_field<std::int32_t>(rec, 16), Switch::exit});
  }
}

void SwitchWatch::apply(std::vector<Switch>& records) {
  std::stable_sort(records.begin(), records.end(), [](const Switch& a, const Switch& b) { return a.t_ns < b.t_ns; });
  for (const Switch& r : records) {
    const auto it = on_.find(r.tid);
    const bool was = it != on_.end() && it->second;
    const bool now = r.kind == Switch::in;
    if (r.kind == Switch::exit) {
      if (it != on_.end()) on_.erase(it);
    } else {
      on_[r.tid] = now;
    }
    on_cpu_ += (now ? 1 : 0) - (was ? 1 : 0);
  }
  records.clear();
}

bool SwitchWatch::quiet(std::int64_t now_ns) {
  if (!stopped_why_.empty()) return false;
  seen_ = false;
  for (PerfRing& ring : rings_)
    ring.read(scratch_, [this](const unsigned char* rec, std::size_t size) { decode(rec, size); });
  window_records_ += static_cast<std::int64_t>(pending_.size());  // apply() leaves pending_ empty
  apply(pending_);
  stop_if_busy(now_ns);
  return stopped_why_.empty() && !seen_ && on_cpu_ == 0;
}

void SwitchWatch::stop_if_busy(std::int64_t now_ns) {
  if (started_ns_ < 0) started_ns_ = window_ns_ = now_ns;
  const std::int64_t span = now_ns - window_ns_;
  const double rate = static_cast<double>(window_records_) * 1e9 / static_cast<double>(std::max<std::int64_t>(span, kWindowNs));
  const bool busy = rate > kMaxSwitchesPerSecond;
  if (!lost_ && !busy) {
    if (span >= kWindowNs) window_ns_ = now_ns, window_records_ = 0;
    return;
  }
  char why[160];
  std::snprintf(why, sizeof why, "stopped at %.2f s: %s", static_cast<double>(now_ns - started_ns_) / 1e9,
                lost_ ? "a buffer overran" : "over 2,000 switches a second (each costs the run's thread ~0.25 us)");
  stopped_why_ = why;
  rings_.clear();  // the events closed: the scheduler's hooks go with them
  fds_.clear();
}

}  // namespace gilhost
