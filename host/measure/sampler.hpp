#pragma once
// Samples a run's process tree from /proc: RSS, threads, processes, CPU ticks.
//
// Members are the root and every process in its process group (multiprocessing children stay in it) and
// its descendants; with find_members_in, every process in the run's cgroup.
// Known members are re-read each tick through an open /proc/PID/stat descriptor (one pread each); the
// full /proc scan that finds new members runs less often, since it costs far more than a tick.
//
// With `stat_every` > 1, only every stat_every-th tick reads /proc/PID/stat; the ticks between read RSS
// from /proc/PID/statm and the thread count from the link count of /proc/PID/task (2 + threads), which
// the kernel answers without formatting the 52 fields of stat: 4-5 us against 7-15 us a process on the
// development VM, where a 1 ms wake-up itself costs ~30 us. Below 5 ms a tick, the link count is read
// every count_every ticks (a tenth of the rescan's, so every 5 ms), the last count carried between: at
// 1 ms the fstat was 7 % of gilhost's CPU (perf, docs/performance.md), RSS keeps every tick. Every field the sampler reports keeps the
// requested interval; only the CPU ticks (Sample::cpu_s) are carried from the last stat read. A process
// gone, or a zombie (statm all zeros), is not counted. The two extra descriptors are held for the first
// kFastMembers processes only, so a fork bomb does not run gilhost out of descriptors; so is, for those
// with one thread, the children file a rescan reads (pread from 0, no open and close each time).

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "measure/switch_watch.hpp"
#include "measure/thread_states.hpp"
#include "results/tree_summary.hpp"
#include "util/fd.hpp"

namespace gilhost {

// Fields of /proc/PID/stat that the sampler uses.
struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  char state = '?';
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  long threads = 0;
  long rss_pages = 0;
  int processor = -1;  // the CPU it last ran on (field 39); -1 where the text stops before it
};
// Parses the text of /proc/PID/stat (the command name may hold spaces and parentheses).
bool parse_proc_stat(const std::string& text, ProcStat& out);
// Reads and parses /proc/PID/stat; false when the process is gone or the text cannot be read.
bool read_proc_stat(pid_t pid, ProcStat& out);

struct Sample {
  std::int64_t t_ns = 0;  // since the sampler started
  std::int64_t rss_bytes = 0;  // tree sum
  std::int64_t root_rss_bytes = 0;
  int threads = 0;
  int processes = 0;
  double cpu_s = 0;  // tree CPU of the live members
};

class TreeSampler {
 public:
  TreeSampler(pid_t root, int rescan_every_ticks, pid_t adopter = 0, int stat_every_ticks = 1);
  // Also read every thread's state each tick (measure/thread_states), at `interval_ms`.
  void sample_threads(int interval_ms);
  // `cpu_stat`: the cpu.stat of a cgroup (v2) that holds the whole tree. A tick at which the cgroup has
  // used no CPU since the last tick's reading reads no process: no member ran, so none can have grown
  // its memory or started a thread or a process, and the last sample stands (counted in
  // idle_sample_count()); the thread states are read at their own rate (their intervals need ends). At
  // most `max_idle_ticks` in a row, so memory the kernel changes on its own (reclaim, khugepaged) is seen
  // at that rate. Only for intervals of 10 ms or more:
  // the kernel adds a running thread's CPU to its cgroup at each scheduler tick (every 1-10 ms, HZ 100 to
  // 1000), so a shorter interval could see a running tree as idle.
  void watch_tree_cpu(UniqueFd cpu_stat, int max_idle_ticks);
  // The same below 10 ms a tick, from the kernel's switch records (measure/switch_watch), which do not lag
  // a running thread as the cgroup's count does: a tick at which no thread of the tree has been on a CPU
  // since the last one reads nothing.
  void watch_switches(std::unique_ptr<SwitchWatch> watch, int max_idle_ticks);
  // `cgroup_procs`: the cgroup.procs of a cgroup that holds the whole tree, open for reading. Rescans
  // then find new members there, in one read, instead of walking every member's `children` files (one a
  // thread: 1,000 opens each rescan for a process of 1,000 threads). A process the script itself moves
  // out of that cgroup is not followed (it has left the run's containment too: run/run_cgroup.hpp).
  void find_members_in(UniqueFd cgroup_procs) { cgroup_procs_fd_ = std::move(cgroup_procs); }
  void sample();
  void sample(std::int64_t now_ns);  // `now_ns`: the tick's time, just read (CLOCK_MONOTONIC)
  // Between ticks: the thread states' probes (ThreadStateSampler::next_probe_gap_ns), 0 when none is due.
  std::int64_t next_probe_gap_ns(std::int64_t now_ns) { return threads_ ? threads_->next_probe_gap_ns(now_ns) : 0; }
  void probe_threads() {
    if (threads_) threads_->probe();
  }
  // What the thread-state sampler read (empty when it was off).
  ThreadObservations take_thread_observations();
  // After the run: peaks and a timeline downsampled to at most `max_points`.
  TreeSummary summary(std::size_t max_points = 200) const;

  std::int64_t peak_rss_bytes() const { return peak_rss_; }
  std::int64_t peak_root_rss_bytes() const { return peak_root_rss_; }
  int peak_threads() const { return peak_threads_; }
  int peak_processes() const { return peak_procs_; }
  std::size_t sample_count() const { return sample_count_; }
  // The root's /proc/PID/stat now, through the descriptor the sampler keeps; false once it is gone.
  bool read_root_stat(ProcStat& out) const;
  std::size_t idle_sample_count() const { return idle_samples_; }
  // How an idle tree was told: "switch records" (with why and when they stopped, if they did), "cgroup
  // cpu.stat", or "none" (every tick read the tree).
  std::string idle_check() const;
  // The samples kept: every one up to kMaxSamples; past that, pairs merged into the one with the higher
  // tree RSS (the peaks are kept apart), so a long run's memory stays bounded.
  const std::vector<Sample>& samples() const { return samples_; }
  static constexpr std::size_t kMaxSamples = 8192;
  std::int64_t sampling_cost_ns() const { return cost_ns_; }
  // Members alive now other than the root (after a fresh scan): what a run left behind.
  std::vector<pid_t> live_members();

 private:
  void rescan();
  bool tree_quiet(std::int64_t now_ns);  // the tree used no CPU since the last tick (switch records or cgroup)
  bool tree_cpu_unchanged();  // watch_tree_cpu's test
  bool idle_if(bool quiet);  // a quiet tick is idle, up to max_idle_ticks in a row
  void carry_idle_tick(long tick, std::int64_t now_ns);  // the last sample again; thread states if due
  void rescan_all();   // every /proc entry: the process group, and descendants through their parents
  void rescan_tree();  // with an adopter: the adopter's children and their descendants
  void rescan_cgroup();  // find_members_in's cgroup.procs: every process in it
  struct Member {
    UniqueFd stat_fd;
    UniqueFd statm_fd;  // with task_fd: opened on the first fast tick (stat_every > 1)
    UniqueFd task_fd;
    UniqueFd children_fd;  // /proc/PID/task/PID/children, kept while it has one thread and the above
    long threads = 0;  // as last sampled; 0: not known yet
    std::uint64_t cpu_ticks = 0;  // as last read from stat
    std::uint64_t stat_reads = 0;
  };
  Member& add_member(pid_t pid);  // known from here on, its stat open (if it can be)
  std::int64_t cpu_ns_of(std::uint64_t ticks) const { return static_cast<std::int64_t>(static_cast<double>(ticks) * 1e9 / clock_ticks_); }
  // Reads one member into `s`; false when it is gone (its descriptors are closed then).
  bool sample_member(pid_t pid, Member& m, bool full, Sample& s, std::uint64_t& ticks);
  bool read_fast(pid_t pid, Member& m, long& rss_pages);
  void close_member(Member& m);
  static constexpr int kFastMembers = 32;
  int fast_members_ = 0;  // members holding statm_fd and task_fd
  pid_t root_;
  pid_t adopter_;
  long adopter_threads_ = 0;  // 0: not known, list its tasks
  UniqueFd adopter_children_fd_;  // its children file, kept open when it has one thread
  int rescan_every_;
  int stat_every_;
  int count_every_;  // the thread count's (fstat's) stride on fast ticks
  long ticks_ = 0;
  std::int64_t start_ns_;
  long page_size_;
  double clock_ticks_;
  std::map<pid_t, Member> members_;
  std::vector<Sample> samples_;
  std::size_t sample_count_ = 0;
  UniqueFd tree_cpu_fd_;  // watch_tree_cpu's cpu.stat; invalid: every tick reads the tree
  std::unique_ptr<SwitchWatch> switches_;  // watch_switches'
  UniqueFd cgroup_procs_fd_;  // find_members_in's; invalid: rescans walk the tree
  std::int64_t tree_cpu_us_ = -1;  // its usage_usec at the last tick
  int max_idle_ticks_ = 0, idle_run_ = 0;
  int busy_backoff_ = 0, busy_wait_ = 0;  // ticks cpu.stat is left unread after it found the tree running
  bool last_kept_ = false;  // the last tick that read the tree kept its sample (some member was alive)
  bool complete_ = false;   // the last tick that read the tree read it completely (quiet: idle_if)
  std::size_t idle_samples_ = 0;
  void keep_sample(const Sample& s);
  std::int64_t peak_rss_ = 0, peak_root_rss_ = 0;
  int peak_threads_ = 0, peak_procs_ = 0;
  std::int64_t cost_ns_ = 0;
  std::unique_ptr<ThreadStateSampler> threads_;
};

}  // namespace gilhost
