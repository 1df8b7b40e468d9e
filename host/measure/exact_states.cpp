#include "measure/exact_states.hpp"

#include <algorithm>

#include <string>

namespace gilhost {

// ---- compaction, while recording ----

void ExactCompactor::put(Thread& t, const ExactEvent& e) {
  out_.push_back(e);
  t.last_out = true;
}

void ExactCompactor::add(const ExactEvent& e) {
  using K = ExactEvent::Kind;
  if (e.kind == K::wakeup) {  // another task's act: not this thread's own last event
    out_.push_back(e);
    return;
  }
  Thread& t = threads_[e.tid];
  t.last = e;
  t.last_out = false;
  switch (e.kind) {
    case K::sys_enter:
      t.enter = e;
      t.open = true;
      t.kept = false;
      return;
    case K::sys_exit:
      if (t.open && t.kept) put(t, e);  // it blocked in this call: its end matters
      t.open = false;
      return;
    case K::switch_out:
      if (!e.preempted && t.open && !t.kept) {
        out_.push_back(t.enter);
        t.kept = true;
      }
      put(t, e);
      return;
    case K::switch_in: put(t, e); return;
    case K::wakeup: return;
  }
}

void ExactCompactor::finish() {
  const auto before = static_cast<std::ptrdiff_t>(out_.size());
  for (auto& [tid, t] : threads_)
    if (!t.last_out) out_.push_back(t.last);
  threads_.clear();
  const auto by_time = [](const ExactEvent& a, const ExactEvent& b) { return a.t_ns < b.t_ns; };
  std::sort(out_.begin() + before, out_.end(), by_time);
  std::inplace_merge(out_.begin(), out_.begin() + before, out_.end(), by_time);
}

// ---- the states, after the run ----

namespace {

// At most ThreadRecord::kMaxSegments: the thread's life cut into that many equal buckets, each the state
// that covered most of it.
void coarsen_timeline(ThreadRecord& t) {
  if (t.timeline.size() <= ThreadRecord::kMaxSegments) return;
  const std::int64_t span = std::max<std::int64_t>(1, t.end_ns - t.timeline.front().start_ns);
  const std::int64_t origin = t.timeline.front().start_ns;
  const std::size_t buckets = ThreadRecord::kMaxSegments;
  std::vector<ThreadTimes> in_bucket(buckets);
  for (std::size_t i = 0; i < t.timeline.size(); ++i) {
    const std::int64_t from = t.timeline[i].start_ns;
    const std::int64_t to = i + 1 < t.timeline.size() ? t.timeline[i + 1].start_ns : t.end_ns;
    for (std::int64_t at = from; at < to;) {
      const std::size_t b = std::min<std::size_t>(buckets - 1, static_cast<std::size_t>((at - origin) * static_cast<std::int64_t>(buckets) / span));
      const std::int64_t bucket_end = origin + (static_cast<std::int64_t>(b) + 1) * span / static_cast<std::int64_t>(buckets);
      const std::int64_t until = std::min(to, std::max(bucket_end, at + 1));
      in_bucket[b][t.timeline[i].state] += until - at;
      at = until;
    }
  }
  std::vector<ThreadSegment> out;
  for (std::size_t b = 0; b < buckets; ++b) {
    ThreadState best = ThreadState::other;
    for (ThreadState s : kThreadStates)
      if (in_bucket[b][s] > in_bucket[b][best]) best = s;
    if (in_bucket[b].lived_ns() == 0) continue;
    if (out.empty() || out.back().state != best)
      out.push_back({origin + static_cast<std::int64_t>(b) * span / static_cast<std::int64_t>(buckets), best});
  }
  t.timeline = std::move(out);
}

// One thread's events → its times and its timeline.
class ExactAccount {
 public:
  explicit ExactAccount(std::int32_t tid) { rec_.tid = tid; }

  void add(const ExactEvent& e) {
    using K = ExactEvent::Kind;
    if (e.pid != 0 && rec_.pid == 0) rec_.pid = e.pid;
    if (e.kind != K::wakeup) ++own_;
    if (!begun_) begin(e);
    switch (e.kind) {
      case K::sys_enter:
        call_.kind = SyscallReading::Kind::in_syscall;
        call_.number = e.nr;
        call_.arg0 = e.arg0;
        call_.arg1 = e.arg1;
        break;
      case K::sys_exit: call_.kind = SyscallReading::Kind::outside_syscall; break;
      case K::switch_out:
        // Blocked outside a system call (a page fault, a stop): `other`, as the sampled mode says.
        enter(e.t_ns, e.preempted ? ThreadState::runqueue : classify_wait(call_, *gils_));
        break;
      case K::switch_in: enter(e.t_ns, ThreadState::cpu); break;
      case K::wakeup:
        if (state_ != ThreadState::cpu && state_ != ThreadState::runqueue) enter(e.t_ns, ThreadState::runqueue);
        break;
    }
    last_ = e.t_ns;
  }

  // Its record: its time counted up to its last event (a thread's last is its exit or the trace's end).
  ThreadRecord finish() {
    enter(last_, state_);
    rec_.end_ns = last_;
    coarsen_timeline(rec_);
    return std::move(rec_);
  }

  // A thread that ran before the recording began (the root, from its spawn): its time until then, on a CPU
  // and waiting for one (the rest of it in `other`), and its state at the start.
  void before(std::int64_t attached_ns, std::int64_t cpu_ns, std::int64_t delay_ns) {
    if (attached_ns <= 0) return;
    begun_ = true;
    rec_.start_ns = 0;
    // In its timeline in that order (when each came is not known), so that the timeline adds up to the times.
    std::int64_t at = 0;
    for (const auto& [state, ns] : {std::pair{ThreadState::cpu, cpu_ns}, std::pair{ThreadState::runqueue, delay_ns},
                                    std::pair{ThreadState::other, attached_ns - cpu_ns - delay_ns}}) {
      if (ns <= 0) continue;
      rec_.times[state] += ns;
      rec_.timeline.push_back({at, state});
      at += ns;
    }
    since_ = at;
    state_ = ThreadState::cpu;
  }

  bool seen_itself() const { return own_ > 0; }
  void use_gils(const ProcessGils& gils) { gils_ = &gils; }
  ThreadRecord& record() { return rec_; }

 private:
  // Its state before its first event: a thread first seen woken had just been made (or was waiting since
  // before the recording); one first seen switching in was queued; any other was running.
  void begin(const ExactEvent& e) {
    begun_ = true;
    rec_.start_ns = since_ = e.t_ns;
    state_ = e.kind == ExactEvent::Kind::wakeup || e.kind == ExactEvent::Kind::switch_in ? ThreadState::runqueue
                                                                                         : ThreadState::cpu;
  }

  void enter(std::int64_t t, ThreadState next) {
    if (t > since_) {
      rec_.times[state_] += t - since_;
      if (rec_.timeline.empty() || rec_.timeline.back().state != state_) rec_.timeline.push_back({since_, state_});
      since_ = t;
    }
    state_ = next;
  }

  ThreadRecord rec_;
  const ProcessGils* gils_ = nullptr;
  SyscallReading call_{SyscallReading::Kind::outside_syscall, -1, 0, 0};
  ThreadState state_ = ThreadState::cpu;
  std::int64_t since_ = 0, last_ = 0;
  bool begun_ = false;
  long own_ = 0;
};

// Why the trace covers less than the run, or "".
std::string missed_why(const ExactTrace& trace) {
  std::string why;
  if (trace.truncated_at_ns >= 0)
    why = "the run switched or blocked more than " + std::to_string(ExactTrace::kMaxEvents) +
          " times: events after " + std::to_string(trace.truncated_at_ns / 1000000) + " ms were not kept";
  if (trace.lost > 0)
    why += std::string(why.empty() ? "" : "; ") + "the kernel dropped " + std::to_string(trace.lost) +
           " records (its buffers were full between two reads)";
  return why;
}

}  // namespace

ThreadStates exact_thread_states(const ExactTrace& trace, const std::vector<GilReport>& gils,
                                 const std::string& unlocated_why, const std::vector<pid_t>& not_the_case,
                                 std::int64_t tree_cpu_ns) {
  ThreadStates out;
  out.method = "exact";
  out.steal_share = trace.steal.run_share();
  out.interval_ms = trace.interval_ms;
  out.samples = trace.drains;
  out.cost_ns = trace.cost_ns;
  ProcessGils root_gils;
  root_gils.located = !gils.empty();
  for (const auto& g : gils)
    if (g.has_gil) root_gils.windows.push_back({g.lo, g.hi});
  out.gil = !root_gils.located ? unlocated_why : root_gils.windows.empty() ? "none" : "located";

  // Which process each thread is in (a wake-up does not say), then how many threads each process had.
  std::map<std::int32_t, std::int32_t> pid_of;
  for (const auto& e : trace.events)
    if (e.pid != 0 && e.kind != ExactEvent::Kind::wakeup) pid_of.emplace(e.tid, e.pid);
  std::map<std::int32_t, int> threads_of;
  for (const auto& [tid, pid] : pid_of) ++threads_of[pid];
  const ProcessGils lone{true, {}};
  const ProcessGils unknown{false, {}};
  auto gils_of = [&](std::int32_t pid, ThreadObservations::Process& process) -> const ProcessGils& {
    const auto found = trace.processes.find(pid);
    if (found != trace.processes.end()) process = found->second;
    return threads_of[pid] == 1 ? lone : process.root_program ? root_gils : unknown;
  };

  std::map<std::int32_t, ExactAccount> accounts;
  for (const auto& e : trace.events) {
    const auto pid = pid_of.find(e.tid);
    if (pid == pid_of.end()) continue;  // a task not of the run (one of ours woke it)
    auto [it, added] = accounts.try_emplace(e.tid, e.tid);
    if (added) {
      ThreadObservations::Process process;
      it->second.use_gils(gils_of(pid->second, process));
      it->second.record().pid = pid->second;
      it->second.record().python = process.python;
      it->second.record().gil_located = gils_of(pid->second, process).located;
      if (e.tid == trace.root) it->second.before(trace.attached_ns, trace.root_cpu_before_ns, trace.root_delay_before_ns);
    }
    it->second.add(e);
  }

  std::int64_t cpu_seen = 0;
  for (auto& [tid, account] : accounts) {
    if (!account.seen_itself()) continue;
    if (std::find(not_the_case.begin(), not_the_case.end(), tid) != not_the_case.end()) continue;
    ThreadRecord rec = account.finish();
    const auto name = trace.names.find(tid);
    if (name != trace.names.end()) rec.name = name->second;
    cpu_seen += rec.times[ThreadState::cpu];
    if (rec.python) out.python_totals += rec.times;
    if (static_cast<int>(out.threads.size()) < kMaxThreadsKept) out.threads.push_back(std::move(rec));
    else ++out.threads_not_kept;
  }
  // Every switch kept: the whole run is seen (the tree's CPU time also holds each process's exit, after its
  // threads' last events, so it is no measure of what was missed). Else the share of that CPU time seen.
  out.coverage_why = missed_why(trace);
  if (out.coverage_why.empty())
    out.coverage = 1.0;
  else if (tree_cpu_ns > 0)
    out.coverage = std::min(1.0, static_cast<double>(cpu_seen) / static_cast<double>(tree_cpu_ns));
  return out;
}

}  // namespace gilhost
