#include "measure/exact_recorder.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "measure/perf_ring.hpp"
#include "util/paths.hpp"
#include "util/clock.hpp"
#include "util/fd.hpp"

namespace gilhost {

namespace {

// ---- tracefs: the tracepoints' ids and record layouts ----

struct Field {
  int offset = -1, size = 0;
};

struct Tracepoint {
  int id = -1;
  std::map<std::string, Field> fields;
  Field field(const std::string& name) const {
    const auto it = fields.find(name);
    return it == fields.end() ? Field{} : it->second;
  }
};

// "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;" → args at 16, 48 bytes.
void parse_field_line(const std::string& line, Tracepoint& tp) {
  const std::size_t f = line.find("field:"), semi = line.find(';');
  const std::size_t off = line.find("offset:"), size = line.find("size:");
  if (f == std::string::npos || semi == std::string::npos || off == std::string::npos || size == std::string::npos) return;
  std::string decl = line.substr(f + 6, semi - f - 6);
  if (const std::size_t bracket = decl.find('['); bracket != std::string::npos) decl.erase(bracket);
  const std::string name = decl.substr(decl.find_last_of(" *") + 1);
  tp.fields[name] = {std::atoi(line.c_str() + off + 7), std::atoi(line.c_str() + size + 5)};
}

std::string tracefs_root() {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
    if (::access((std::string(dir) + "/events/sched/sched_switch/id").c_str(), R_OK) == 0) return dir;
  // Not mounted: as root we may mount it, as perf does.
  if (::geteuid() == 0 && ::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
      ::access("/sys/kernel/tracing/events/sched/sched_switch/id", R_OK) == 0)
    return "/sys/kernel/tracing";
  return "";
}

bool read_tracepoint(const std::string& root, const std::string& name, Tracepoint& tp) {
  std::ifstream id(root + "/events/" + name + "/id"), format(root + "/events/" + name + "/format");
  if (!(id >> tp.id) || !format) return false;
  for (std::string line; std::getline(format, line);) parse_field_line(line, tp);
  return true;
}

struct Tracepoints {
  Tracepoint enter, exit, wakeup, wakeup_new;
  // Where the fields we read are; false when a layout lacks one (a kernel we do not understand).
  bool complete() const {
    return enter.field("id").offset >= 0 && enter.field("args").offset >= 0 && enter.field("args").size >= 16 &&
           wakeup.field("pid").offset >= 0 && wakeup_new.field("pid").offset >= 0;
  }
};

bool read_tracepoints_now(Tracepoints& tps, std::string& why_not) {
  const std::string root = tracefs_root();
  if (root.empty()) {
    why_not = "the kernel's tracepoints are not readable (no tracefs at /sys/kernel/tracing; as root, gilhost mounts it)";
    return false;
  }
  if (!read_tracepoint(root, "raw_syscalls/sys_enter", tps.enter) || !read_tracepoint(root, "raw_syscalls/sys_exit", tps.exit) ||
      !read_tracepoint(root, "sched/sched_wakeup", tps.wakeup) || !read_tracepoint(root, "sched/sched_wakeup_new", tps.wakeup_new)) {
    why_not = "the tracepoints raw_syscalls:sys_enter/sys_exit and sched:sched_wakeup are not all in " + root;
    return false;
  }
  if (!tps.complete()) {
    why_not = "the tracepoints' record layout in " + root + " is not the one expected";
    return false;
  }
  return true;
}

// Read once a session (a run's first milliseconds go unrecorded while we read them).
bool read_tracepoints(Tracepoints& tps, std::string& why_not) {
  static Tracepoints cached;
  static const std::string why = [] {
    std::string w;
    read_tracepoints_now(cached, w);
    return w;
  }();
  tps = cached;
  why_not = why;
  return why.empty();
}

// ---- perf events ----

perf_event_attr tracepoint_attr(int id, bool lead) {
  perf_event_attr a{};
  a.type = PERF_TYPE_TRACEPOINT;
  a.size = sizeof a;
  a.config = static_cast<std::uint64_t>(id);
  a.sample_period = 1;
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
  a.inherit = 1;
  a.sample_id_all = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  if (lead) {  // the side-band records, once per CPU
    a.context_switch = 1;
    a.task = 1;
    a.comm = 1;
    a.comm_exec = 1;
  }
  return a;
}

std::string open_failure(int err) {
  return perf_open_failure(err, "exact mode needs root, CAP_PERFMON, or perf_event_paranoid -1");
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}


}  // namespace

// ---- the recorder ----

struct ExactRecorder::Impl {
  struct Cpu {
    std::vector<UniqueFd> fds;  // the lead (mapped) first
    PerfRing ring;
    UniqueFd wide;   // sched_wakeup of every task on this CPU, filtered here to the run's threads
    PerfRing wide_ring;  // its own buffer where the kernel will not share the lead's
  };
  std::set<std::int32_t> ours;  // the run's threads: the root, every thread forked since, every one seen
  Tracepoints tps;
  std::vector<Cpu> cpus;
  std::int64_t start_ns = 0;
  std::string root_exe;
  ExactTrace trace;
  std::vector<ExactEvent> pending;  // decoded, not yet in time order
  std::vector<unsigned char> scratch;
  ExactCompactor compactor{trace.events};
  StealReader steal;
  bool stopped = false;

  bool open(pid_t root, std::string& why_not);
  bool open_wide(Cpu& c, int cpu, std::string& why_not);
  void decode(const unsigned char* rec, std::size_t size);
  void decode_sample(const unsigned char* rec, std::size_t size);
  void note_fork(const unsigned char* rec);
  void note_comm(const unsigned char* rec, std::size_t size, bool exec);
  void settle(std::int64_t until_ns);
  void stop();
};

bool ExactRecorder::Impl::open(pid_t root, std::string& why_not) {
  const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < std::max(1L, configured); ++cpu) {
    Cpu c;
    for (const Tracepoint* tp : {&tps.enter, &tps.exit, &tps.wakeup, &tps.wakeup_new}) {
      const bool lead = c.fds.empty();
      perf_event_attr attr = tracepoint_attr(tp->id, lead);
      UniqueFd fd(perf_event_open(attr, root, cpu, -1, PERF_FLAG_FD_CLOEXEC));
      if (!fd) {
        if (errno == ENODEV && cpu > 0) break;  // an offline CPU: nothing runs there
        why_not = open_failure(errno);
        return false;
      }
      // The lead's buffer is mapped first: the kernel redirects the others only into a mapped one.
      if (lead && !(c.ring = map_perf_ring(fd.get(), 1u << 20, why_not)).mapped()) return false;
      if (!lead && ::ioctl(fd.get(), PERF_EVENT_IOC_SET_OUTPUT, c.fds.front().get()) != 0) {
        why_not = std::string("perf events could not share a buffer: ") + std::strerror(errno);
        return false;
      }
      c.fds.push_back(std::move(fd));
    }
    if (c.fds.size() != 4) continue;
    if (!open_wide(c, cpu, why_not)) return false;
    cpus.push_back(std::move(c));
  }
  why_not.clear();
  return !cpus.empty();
}

// A task's own inherited wake-up events miss the wake-ups the kernel makes on its behalf (a timed wait's
// timer, half of a GIL waiter's on a loaded machine): sched_wakeup of every task, per CPU, kept for ours.
bool ExactRecorder::Impl::open_wide(Cpu& c, int cpu, std::string& why_not) {
  perf_event_attr attr = tracepoint_attr(tps.wakeup.id, false);
  attr.inherit = 0;
  c.wide = UniqueFd(perf_event_open(attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
  if (!c.wide) {
    why_not = open_failure(errno);
    return false;
  }
  if (::ioctl(c.wide.get(), PERF_EVENT_IOC_SET_OUTPUT, c.fds.front().get()) == 0) return true;
  c.wide_ring = map_perf_ring(c.wide.get(), 1u << 20, why_not);
  return c.wide_ring.mapped();
}

// One record of a ring: a tracepoint's sample, a switch, a fork, a name; anything else is skipped.
void ExactRecorder::Impl::decode(const unsigned char* rec, std::size_t size) {
  const auto* h = reinterpret_cast<const perf_event_header*>(rec);
  // sample_id_all: every other record ends with { u32 pid, tid; u64 time; u32 cpu, res }.
  constexpr std::size_t kSampleId = 24;
  switch (h->type) {
    case PERF_RECORD_SAMPLE: decode_sample(rec, size); return;
    case PERF_RECORD_SWITCH: {
      if (size < sizeof *h + kSampleId) return;
      const std::size_t id = size - kSampleId;
      ExactEvent e;
      e.pid = record_field<std::int32_t>(rec, id);
      e.tid = record_field<std::int32_t>(rec, id + 4);
      e.t_ns = static_cast<std::int64_t>(record_field<std::uint64_t>(rec, id + 8)) - start_ns;
      const bool out = (h->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
      e.kind = out ? ExactEvent::Kind::switch_out : ExactEvent::Kind::switch_in;
      e.preempted = out && (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
      pending.push_back(e);
      return;
    }
    case PERF_RECORD_FORK: note_fork(rec); return;
    case PERF_RECORD_COMM: note_comm(rec, size, (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0); return;
    case PERF_RECORD_LOST: trace.lost += static_cast<std::int64_t>(record_field<std::uint64_t>(rec, sizeof *h + 8)); return;
    default: return;
  }
}

// { header; u32 pid, tid; u64 time; u32 cpu, res; u32 size; raw[size] }, the raw record's first field its
// tracepoint's id.
void ExactRecorder::Impl::decode_sample(const unsigned char* rec, std::size_t size) {
  constexpr std::size_t kRaw = sizeof(perf_event_header) + 24 + 4;
  if (size < kRaw + 2) return;
  const unsigned char* raw = rec + kRaw;
  const std::size_t raw_size = std::min<std::size_t>(record_field<std::uint32_t>(rec, kRaw - 4), size - kRaw);
  auto field = [&](const Field& f, std::size_t extra = 0) -> std::uint64_t {
    const std::size_t at = static_cast<std::size_t>(f.offset) + extra;
    if (f.offset < 0 || at + 8 > raw_size) return 0;
    return f.size == 4 && extra == 0 ? static_cast<std::uint64_t>(record_field<std::uint32_t>(raw, at)) : record_field<std::uint64_t>(raw, at);
  };
  ExactEvent e;
  e.pid = record_field<std::int32_t>(rec, sizeof(perf_event_header));
  e.tid = record_field<std::int32_t>(rec, sizeof(perf_event_header) + 4);
  e.t_ns = static_cast<std::int64_t>(record_field<std::uint64_t>(rec, sizeof(perf_event_header) + 8)) - start_ns;
  const int type = record_field<std::uint16_t>(raw, 0);
  if (type == tps.enter.id) {
    e.kind = ExactEvent::Kind::sys_enter;
    e.nr = static_cast<std::int32_t>(field(tps.enter.field("id")));
    e.arg0 = field(tps.enter.field("args"));
    e.arg1 = field(tps.enter.field("args"), 8);
  } else if (type == tps.exit.id) {
    e.kind = ExactEvent::Kind::sys_exit;
  } else if (type == tps.wakeup.id || type == tps.wakeup_new.id) {
    // The woken thread is the record's `pid` field; the sample's own pid and tid are the waker's.
    const Field f = (type == tps.wakeup.id ? tps.wakeup : tps.wakeup_new).field("pid");
    if (f.offset < 0 || static_cast<std::size_t>(f.offset) + 4 > raw_size) return;
    e.kind = ExactEvent::Kind::wakeup;
    e.tid = record_field<std::int32_t>(raw, static_cast<std::size_t>(f.offset));
    e.pid = 0;
  } else {
    return;
  }
  pending.push_back(e);
}

// { header; u32 pid, ppid, tid, ptid; u64 time; sample_id }: a new thread is named as its parent, a new
// process is the same program as its parent until it execs.
void ExactRecorder::Impl::note_fork(const unsigned char* rec) {
  const auto pid = static_cast<pid_t>(record_field<std::uint32_t>(rec, 8)), ppid = static_cast<pid_t>(record_field<std::uint32_t>(rec, 12));
  const auto tid = static_cast<pid_t>(record_field<std::uint32_t>(rec, 16)), ptid = static_cast<pid_t>(record_field<std::uint32_t>(rec, 20));
  ours.insert(tid);
  if (const auto name = trace.names.find(ptid); name != trace.names.end()) trace.names[tid] = name->second;
  if (pid != ppid && !trace.processes.count(pid)) {
    const auto parent = trace.processes.find(ppid);
    trace.processes[pid] = parent != trace.processes.end() ? parent->second : ThreadObservations::Process{};
  }
}

// { header; u32 pid, tid; char comm[] (NUL-padded to 8 bytes); sample_id }.
void ExactRecorder::Impl::note_comm(const unsigned char* rec, std::size_t size, bool exec) {
  if (size < 16 + 24) return;
  const auto pid = static_cast<pid_t>(record_field<std::uint32_t>(rec, 8)), tid = static_cast<pid_t>(record_field<std::uint32_t>(rec, 12));
  const char* comm = reinterpret_cast<const char*>(rec + 16);
  const std::string name(comm, strnlen(comm, size - 16 - 24));
  trace.names[tid] = name;
  if (!exec) return;
  // A new program: a Python process if it is the root's program again or is named python*.
  const std::string exe = proc_exe(pid);
  ThreadObservations::Process& p = trace.processes[pid];
  p.root_program = !exe.empty() && exe == root_exe;
  const std::string base = exe.empty() ? name : exe.substr(exe.rfind('/') + 1);
  p.python = p.root_program || base.rfind("python", 0) == 0;
}

// Events up to `until_ns` in time order into the trace (later ones wait: another CPU's buffer may still
// hold earlier ones).
void ExactRecorder::Impl::settle(std::int64_t until_ns) {
  std::stable_sort(pending.begin(), pending.end(), [](const ExactEvent& a, const ExactEvent& b) { return a.t_ns < b.t_ns; });
  std::size_t n = 0;
  for (; n < pending.size() && pending[n].t_ns <= until_ns; ++n) {
    if (stopped) continue;
    if (trace.events.size() >= ExactTrace::kMaxEvents) {
      trace.truncated_at_ns = pending[n].t_ns;
      stop();
      continue;
    }
    const ExactEvent& e = pending[n];
    if (e.kind != ExactEvent::Kind::wakeup) ours.insert(e.tid);
    else if (!ours.count(e.tid)) continue;  // another task's
    compactor.add(e);
  }
  pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(n));
}

// Past the cap: the events are disabled (and with them their copies in every thread), the run goes on.
void ExactRecorder::Impl::stop() {
  stopped = true;
  for (auto& c : cpus) {
    for (auto& fd : c.fds) ::ioctl(fd.get(), PERF_EVENT_IOC_DISABLE, 0);
    ::ioctl(c.wide.get(), PERF_EVENT_IOC_DISABLE, 0);
  }
}

// The kernel hooks a tracepoint up for perf at its first event and unhooks it after the last, each time
// waiting for RCU (25-85 ms a run here, opening and closing): one disabled event per tracepoint, held for
// the rest of the session, keeps them hooked up between runs.
void keep_tracepoints_hooked(const Tracepoints& tps) {
  static std::vector<UniqueFd> keepers;
  if (!keepers.empty()) return;
  for (const Tracepoint* tp : {&tps.enter, &tps.exit, &tps.wakeup, &tps.wakeup_new}) {
    perf_event_attr attr = tracepoint_attr(tp->id, false);
    attr.inherit = 0;
    attr.disabled = 1;
    keepers.emplace_back(perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  }
}

std::unique_ptr<ExactRecorder> ExactRecorder::start(pid_t root, std::int64_t start_ns, int interval_ms, std::string& why_not) {
  auto impl = std::make_unique<Impl>();
  if (!read_tracepoints(impl->tps, why_not)) return nullptr;
  keep_tracepoints_hooked(impl->tps);
  impl->start_ns = start_ns;
  impl->root_exe = proc_exe(root);
  impl->trace.root = root;
  impl->trace.interval_ms = interval_ms;
  impl->trace.processes[root] = {true, true};
  impl->ours.insert(root);
  impl->trace.names[root] = read_line("/proc/" + std::to_string(root) + "/comm");
  if (!impl->open(root, why_not)) return nullptr;
  // What the root did before the events were on: its CPU time and its wait for a core since its spawn.
  impl->trace.attached_ns = monotonic_ns() - start_ns;
  std::istringstream schedstat(read_line("/proc/" + std::to_string(root) + "/schedstat"));
  schedstat >> impl->trace.root_cpu_before_ns >> impl->trace.root_delay_before_ns;
  return std::unique_ptr<ExactRecorder>(new ExactRecorder(std::move(impl)));
}

bool ExactRecorder::available(std::string& why_not) {
  static const std::string why = [] {
    Tracepoints tps;
    std::string w;
    if (!read_tracepoints(tps, w)) return w;
    perf_event_attr attr = tracepoint_attr(tps.enter.id, true);
    UniqueFd fd(perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    return fd ? std::string() : open_failure(errno);
  }();
  why_not = why;
  return why.empty();
}

ExactRecorder::ExactRecorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExactRecorder::~ExactRecorder() = default;

void ExactRecorder::drain() {
  const std::int64_t t0 = monotonic_ns();
  for (auto& c : impl_->cpus) {
    c.ring.read(impl_->scratch, [&](const unsigned char* rec, std::size_t size) { impl_->decode(rec, size); });
    if (c.wide_ring.mapped())
      c.wide_ring.read(impl_->scratch, [&](const unsigned char* rec, std::size_t size) { impl_->decode(rec, size); });
  }
  // A record is in its buffer within microseconds of its time: two intervals back, every CPU's are in.
  impl_->settle(t0 - impl_->start_ns - 2 * std::int64_t{impl_->trace.interval_ms} * 1000000);
  impl_->steal.read(t0 - impl_->start_ns, impl_->trace.steal);
  ++impl_->trace.drains;
  impl_->trace.cost_ns += monotonic_ns() - t0;
}

ExactTrace ExactRecorder::finish() {
  drain();
  impl_->settle(INT64_MAX);
  impl_->compactor.finish();
  impl_->trace.end_ns = monotonic_ns() - impl_->start_ns;
  impl_->steal.read(impl_->trace.end_ns, impl_->trace.steal, true);
  impl_->trace.steal.close();
  return std::move(impl_->trace);
}

}  // namespace gilhost
