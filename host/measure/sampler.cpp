#include "measure/sampler.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string.h>  // memrchr

#include "util/clock.hpp"

namespace gilhost {

namespace {
// `text`: NUL-terminated, `n` bytes long (no copy into a std::string on the sampler's every tick).
bool parse_stat_text(const char* text, std::size_t n, ProcStat& out) {
  const char* open = static_cast<const char*>(std::memchr(text, '(', n));
  const char* close = static_cast<const char*>(::memrchr(text, ')', n));
  if (!open || !close || close < open) return false;
  out.pid = static_cast<pid_t>(std::atol(text));
  // Fields after the name, numbered as in proc(5): 3 state, 4 ppid, 5 pgrp, 14 utime, 15 stime,
  // 20 num_threads, 24 rss, 39 processor.
  const char* p = close + 1;
  int field = 3;
  char* end = nullptr;
  while (*p && field <= 39) {
    while (*p == ' ') ++p;
    if (!*p) break;
    switch (field) {
      case 3: out.state = *p; break;
      case 4: out.ppid = static_cast<pid_t>(std::strtol(p, &end, 10)); break;
      case 5: out.pgrp = static_cast<pid_t>(std::strtol(p, &end, 10)); break;
      case 14: out.utime_ticks = std::strtoull(p, &end, 10); break;
      case 15: out.stime_ticks = std::strtoull(p, &end, 10); break;
      case 20: out.threads = std::strtol(p, &end, 10); break;
      case 24: out.rss_pages = std::strtol(p, &end, 10); break;
      case 39: out.processor = static_cast<int>(std::strtol(p, &end, 10)); break;
      default: break;
    }
    while (*p && *p != ' ') ++p;
    ++field;
  }
  return field > 24;
}
}  // namespace

bool parse_proc_stat(const std::string& text, ProcStat& out) { return parse_stat_text(text.c_str(), text.size(), out); }

namespace {
bool read_stat_fd(int fd, ProcStat& out) {
  char buf[1024];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  buf[n] = 0;
  return parse_stat_text(buf, static_cast<std::size_t>(n), out);
}

// Resident pages from /proc/PID/statm ("size resident shared ..."); -1 when gone, 0 for a zombie (its
// memory is released: every field is 0).
long read_statm_resident(int fd) {
  char buf[128];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  char* end = nullptr;
  const long size = std::strtol(buf, &end, 10);
  const long resident = std::strtol(end, nullptr, 10);
  return size > 0 ? resident : 0;
}

UniqueFd open_proc(pid_t pid, const char* file) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), file);
  return UniqueFd(::open(path, O_RDONLY | O_CLOEXEC));
}
UniqueFd open_stat(pid_t pid) { return open_proc(pid, "stat"); }
}  // namespace

bool read_proc_stat(pid_t pid, ProcStat& out) {
  const UniqueFd fd = open_stat(pid);
  return fd && read_stat_fd(fd.get(), out);
}

TreeSampler::TreeSampler(pid_t root, int rescan_every_ticks, pid_t adopter, int stat_every_ticks)
    : root_(root),
      adopter_(adopter),
      rescan_every_(rescan_every_ticks < 1 ? 1 : rescan_every_ticks),
      stat_every_(stat_every_ticks < 1 ? 1 : stat_every_ticks),
      count_every_(std::max(1, rescan_every_ / 10)),
      start_ns_(monotonic_ns()),
      page_size_(::sysconf(_SC_PAGESIZE)),
      clock_ticks_(static_cast<double>(::sysconf(_SC_CLK_TCK))) {
  members_[root_].stat_fd = open_stat(root_);
  if (adopter_ > 0) {
    // The adopter's thread count, once: one children file to read per rescan when it has one thread.
    UniqueFd fd = open_stat(adopter_);
    ProcStat st;
    if (fd && read_stat_fd(fd.get(), st)) adopter_threads_ = st.threads;
  }
}

bool TreeSampler::read_root_stat(ProcStat& out) const {
  const auto root = members_.find(root_);
  return root != members_.end() && root->second.stat_fd && read_stat_fd(root->second.stat_fd.get(), out);
}

namespace {
UniqueFd open_children(pid_t pid) {
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(pid), static_cast<int>(pid));
  return UniqueFd(::open(path, O_RDONLY | O_CLOEXEC));
}

void read_children_file(const char* path, std::vector<pid_t>& out) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd) read_pid_list(fd.get(), out);
}

// The children of every thread of `pid` (a child belongs to the thread that forked it). One file when
// the process is known to have one thread, else one per thread.
void read_children(pid_t pid, long threads, std::vector<pid_t>& out) {
  char path[320];
  if (threads == 1) {
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", static_cast<int>(pid), static_cast<int>(pid));
    read_children_file(path, out);
    return;
  }
  std::snprintf(path, sizeof path, "/proc/%d/task", static_cast<int>(pid));
  DIR* dir = ::opendir(path);
  if (!dir) return;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof path, "/proc/%d/task/%s/children", static_cast<int>(pid), e->d_name);
    read_children_file(path, out);
  }
  ::closedir(dir);
}
}  // namespace

void TreeSampler::rescan() {
  if (cgroup_procs_fd_) rescan_cgroup();
  else if (adopter_ > 0) rescan_tree();
  else rescan_all();
}

TreeSampler::Member& TreeSampler::add_member(pid_t pid) {
  auto [it, added] = members_.try_emplace(pid);
  if (added) {
    it->second.stat_fd = open_stat(pid);
    if (!it->second.stat_fd && (errno == EMFILE || errno == ENFILE) && threads_) threads_->process_unreadable();
  }
  return it->second;
}

void TreeSampler::rescan_cgroup() {
  std::vector<pid_t> pids;
  read_pid_list(cgroup_procs_fd_.get(), pids);
  for (pid_t pid : pids) add_member(pid);
}

// As a subreaper's, every process of the run is a descendant of the adopter's children (the root, and
// orphans re-parented to it), setsid'd or not: walk that tree, at a cost that grows with the run's size
// rather than the machine's.
void TreeSampler::rescan_tree() {
  std::vector<pid_t> todo{root_};
  // One-threaded (gilhost's sampling loop): its children file stays open.
  if (adopter_threads_ == 1 && !adopter_children_fd_) adopter_children_fd_ = open_children(adopter_);
  if (adopter_children_fd_) read_pid_list(adopter_children_fd_.get(), todo);
  else read_children(adopter_, adopter_threads_, todo);
  std::set<pid_t> seen;
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    if (!seen.insert(pid).second) continue;
    Member& m = add_member(pid);
    if (!m.stat_fd) continue;
    // A one-threaded member that holds the fast descriptors keeps its children file open too.
    if (m.threads == 1 && m.statm_fd && !m.children_fd) m.children_fd = open_children(pid);
    if (m.threads == 1 && m.children_fd) read_pid_list(m.children_fd.get(), todo);
    else read_children(pid, m.threads, todo);
  }
}

void TreeSampler::rescan_all() {
  DIR* dir = ::opendir("/proc");
  if (!dir) return;
  std::map<pid_t, pid_t> parent_of;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (members_.count(pid)) continue;
    UniqueFd fd = open_stat(pid);
    ProcStat st;
    if (!fd || !read_stat_fd(fd.get(), st)) continue;
    if (st.pgrp == root_) {
      members_[pid].stat_fd = std::move(fd);
    } else {
      parent_of[pid] = st.ppid;
    }
  }
  ::closedir(dir);
  // Descendants that left the group (setsid, setpgid) still belong to the tree through their parents.
  bool grew = true;
  while (grew) {
    grew = false;
    for (auto it = parent_of.begin(); it != parent_of.end();) {
      if (members_.count(it->second)) {
        members_[it->first].stat_fd = open_stat(it->first);
        if (!members_[it->first].stat_fd && (errno == EMFILE || errno == ENFILE) && threads_) threads_->process_unreadable();
        it = parent_of.erase(it);
        grew = true;
      } else {
        ++it;
      }
    }
  }
}

void TreeSampler::close_member(Member& m) {
  if (m.statm_fd) --fast_members_;
  m.stat_fd.reset();
  m.statm_fd.reset();
  m.task_fd.reset();
  m.children_fd.reset();
}

// RSS from statm and threads from /proc/PID/task's link count; false when the stat read must decide
// (descriptors not available, or the process looks gone or a zombie).
bool TreeSampler::read_fast(pid_t pid, Member& m, long& rss_pages) {
  if (!m.statm_fd) {
    if (fast_members_ >= kFastMembers) return false;
    m.statm_fd = open_proc(pid, "statm");
    m.task_fd = open_proc(pid, "task");
    if (!m.statm_fd || !m.task_fd) {
      m.statm_fd.reset();
      m.task_fd.reset();
      return false;
    }
    ++fast_members_;
  }
  rss_pages = read_statm_resident(m.statm_fd.get());
  if (rss_pages <= 0) return false;  // gone, or a zombie: the stat read decides
  // The thread count at most every count_every_ ticks (5 ms at 1 ms); statm alone between.
  if ((ticks_ - 1) % count_every_ != 0) return true;
  struct stat st {};
  if (::fstat(m.task_fd.get(), &st) != 0 || st.st_nlink < 3) return false;
  m.threads = static_cast<long>(st.st_nlink) - 2;
  return true;
}

bool TreeSampler::sample_member(pid_t pid, Member& m, bool full, Sample& s, std::uint64_t& ticks) {
  if (!m.stat_fd) return false;
  long rss_pages = 0;
  if (full || m.threads == 0 || !read_fast(pid, m, rss_pages)) {
    ProcStat st;
    if (!read_stat_fd(m.stat_fd.get(), st) || st.state == 'Z') {
      // A zombie's count is final: the thread states' last checkpoint of it.
      if (st.state == 'Z' && threads_) threads_->process_ended(pid, cpu_ns_of(st.utime_ticks + st.stime_ticks));
      // Gone, or a zombie whose memory is already released: keep the fds closed but remember the pid.
      close_member(m);
      return false;
    }
    ++m.stat_reads;
    m.threads = st.threads;
    m.cpu_ticks = st.utime_ticks + st.stime_ticks;
    rss_pages = st.rss_pages;
  }
  const std::int64_t rss = static_cast<std::int64_t>(rss_pages) * page_size_;
  s.rss_bytes += rss;
  if (pid == root_) s.root_rss_bytes = rss;
  s.threads += static_cast<int>(m.threads);
  s.processes += 1;
  ticks += m.cpu_ticks;
  return true;
}

void TreeSampler::sample_threads(int interval_ms) {
  threads_ = std::make_unique<ThreadStateSampler>(root_, start_ns_, interval_ms);
}

ThreadObservations TreeSampler::take_thread_observations() {
  return threads_ ? threads_->take() : ThreadObservations{};
}

void TreeSampler::watch_tree_cpu(UniqueFd cpu_stat, int max_idle_ticks) {
  tree_cpu_fd_ = std::move(cpu_stat);
  max_idle_ticks_ = max_idle_ticks;
  // A run starts busy (the interpreter's start-up takes tens of ms): its first ticks read the tree without
  // asking, so a short run never reads cpu.stat at all.
  busy_backoff_ = busy_wait_ = 4;
}

void TreeSampler::watch_switches(std::unique_ptr<SwitchWatch> watch, int max_idle_ticks) {
  switches_ = std::move(watch);
  max_idle_ticks_ = max_idle_ticks;
}

namespace {
// usage_usec from a cgroup's cpu.stat (its first line), or -1.
std::int64_t read_cgroup_usage_us(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  const char* at = std::strstr(buf, "usage_usec ");
  return at ? std::strtoll(at + 11, nullptr, 10) : -1;
}
}  // namespace

bool TreeSampler::tree_quiet(std::int64_t now_ns) {
  if (switches_) return switches_->quiet(now_ns);  // every tick: its buffers are read as they fill
  return tree_cpu_fd_ && tree_cpu_unchanged();
}

bool TreeSampler::idle_if(bool quiet) {
  // The first quiet tick after the tree ran is read, and completely (sample() sets complete_): a thread or process
  // started just before it went quiet may not be counted yet (the counts are read every few ticks, the
  // rescan every 50 ms), and an idle stretch would hide it for up to max_idle_ticks.
  const bool idle = quiet && complete_ && idle_run_ < max_idle_ticks_ && last_kept_;
  idle_run_ = idle ? idle_run_ + 1 : 0;
  return idle;
}

bool TreeSampler::tree_cpu_unchanged() {
  // A busy tree is read every tick anyway: after a tick that found it running, cpu.stat is left unread for
  // 1, 2, 4, then 8 ticks (its read costs about what a member's does), and read again every tick once it
  // finds the tree idle. An older usage to compare with is as good: every read since came after it.
  if (busy_wait_ > 0) {
    --busy_wait_;
    return false;
  }
  const std::int64_t used = read_cgroup_usage_us(tree_cpu_fd_.get());
  const bool same = used >= 0 && used == tree_cpu_us_;
  tree_cpu_us_ = used;
  busy_backoff_ = same ? 0 : std::min(8, std::max(1, 2 * busy_backoff_));
  busy_wait_ = busy_backoff_;
  return same;
}

void TreeSampler::carry_idle_tick(long tick, std::int64_t now_ns) {
  // The thread states keep their own rate: each interval's off-CPU time is split by the readings at its
  // ends, so a long idle stretch with none would end unclassified. A thread blocked at its last reading
  // is blocked there still, and its reading is taken again from memory (measure/thread_states).
  if (threads_ && threads_->due_while_idle(tick)) {
    threads_->begin_tick(tick, true);
    for (auto& [pid, m] : members_)
      if (m.stat_fd && m.threads > 0) threads_->sample_process(pid, m.threads, false);
    threads_->end_tick();
  }
  Sample same = samples_.back();
  same.t_ns = now_ns - start_ns_;
  keep_sample(same);
  ++idle_samples_;
}

void TreeSampler::sample() { sample(monotonic_ns()); }

void TreeSampler::sample(std::int64_t t0) {
  // Read before the members, so that "nothing ran since" covers every read the last tick made.
  const bool quiet = tree_quiet(t0);
  const bool idle = idle_if(quiet);
  const long tick = ticks_++;
  if (idle) {
    carry_idle_tick(tick, t0);
    cost_ns_ += monotonic_ns() - t0;
    return;
  }
  // A quiet tree read all the same (the first quiet tick, or one past max_idle_ticks) is read completely:
  // a rescan and every member's stat, so that the idle ticks after it start from every thread and process.
  complete_ = quiet;
  if (threads_) threads_->tree_ran();  // its threads are read again at the next tick due, idle or not
  const bool rescanned = tick % rescan_every_ == 0 || quiet;
  if (rescanned) rescan();
  const bool read_threads = threads_ && threads_->due_at(tick);
  // The thread states' coverage needs each process's CPU at ticks that read its threads too: at rescans.
  const bool full = tick % stat_every_ == 0 || (read_threads && rescanned) || quiet;
  Sample s;
  s.t_ns = t0 - start_ns_;
  std::uint64_t ticks = 0;
  if (read_threads) threads_->begin_tick(tick);
  for (auto& [pid, member] : members_) {
    const std::uint64_t before = member.stat_reads;
    if (!sample_member(pid, member, full, s, ticks) || !read_threads) continue;
    const bool counted = member.stat_reads != before;
    threads_->sample_process(pid, member.threads, rescanned, counted ? cpu_ns_of(member.cpu_ticks) : -1);
  }
  if (read_threads) threads_->end_tick();
  s.cpu_s = static_cast<double>(ticks) / clock_ticks_;
  last_kept_ = s.processes > 0;
  if (last_kept_) {
    keep_sample(s);
    peak_rss_ = std::max(peak_rss_, s.rss_bytes);
    peak_root_rss_ = std::max(peak_root_rss_, s.root_rss_bytes);
    peak_threads_ = std::max(peak_threads_, s.threads);
    peak_procs_ = std::max(peak_procs_, s.processes);
  }
  cost_ns_ += monotonic_ns() - t0;
}

void TreeSampler::keep_sample(const Sample& s) {
  ++sample_count_;
  if (samples_.size() >= kMaxSamples) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i + 1 < samples_.size(); i += 2)
      samples_[kept++] = samples_[i + 1].rss_bytes > samples_[i].rss_bytes ? samples_[i + 1] : samples_[i];
    samples_.resize(kept);
  }
  samples_.push_back(s);
}

std::string TreeSampler::idle_check() const {
  if (switches_) return "switch records" + (switches_->stopped_why().empty() ? "" : ", " + switches_->stopped_why());
  return tree_cpu_fd_ ? "cgroup cpu.stat" : "none";
}

std::vector<pid_t> TreeSampler::live_members() {
  rescan();
  std::vector<pid_t> out;
  for (auto& [pid, m] : members_) {
    if (pid == root_ || !m.stat_fd) continue;
    ProcStat st;
    if (read_stat_fd(m.stat_fd.get(), st) && st.state != 'Z') out.push_back(pid);
  }
  return out;
}

TreeSummary TreeSampler::summary(std::size_t max_points) const {
  TreeSummary out;
  out.samples = sample_count_;
  out.peak_tree_rss_bytes = peak_rss_;
  out.peak_root_rss_bytes = peak_root_rss_;
  out.peak_threads = peak_threads_;
  out.peak_processes = peak_procs_;
  out.sampling_cost_ns = cost_ns_;
  out.idle_samples = idle_samples_;
  out.idle_check = idle_check();
  const std::size_t n = samples_.size();
  const std::size_t step = n > max_points ? (n + max_points - 1) / max_points : 1;
  for (std::size_t i = 0; i < n; i += step) {
    // Keep each bucket's peak, so downsampling never hides the high-water mark.
    Sample peak = samples_[i];
    for (std::size_t k = i; k < std::min(n, i + step); ++k)
      if (samples_[k].rss_bytes > peak.rss_bytes) peak = samples_[k];
    out.timeline.push_back({static_cast<double>(peak.t_ns / 1000000), static_cast<double>(peak.rss_bytes),
                            peak.threads, peak.processes});
  }
  return out;
}

}  // namespace gilhost
