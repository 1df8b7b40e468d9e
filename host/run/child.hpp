#pragma once
// One measured child process: spawned in its own process group, its output captured, its process tree
// sampled, bounded by a timeout, reaped with wait4, and nothing of its tree left behind (run/child_group).
#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/exact_states.hpp"
#include "measure/thread_states.hpp"
#include "protocol/event_log.hpp"
#include "results/tree_summary.hpp"
#include "run/child_group.hpp"
#include "run/run_cgroup.hpp"

namespace gilhost {

// The first `head_limit` bytes and the last `tail_limit` bytes of a stream, and its full size: a script
// that prints gigabytes costs memory bounded by the limits, and is still read so it never blocks.
class BoundedCapture {
 public:
  BoundedCapture(std::size_t head_limit, std::size_t tail_limit) : head_limit_(head_limit), tail_limit_(tail_limit) {}
  void append(const char* data, std::size_t n);
  std::uint64_t total() const { return total_; }
  bool truncated() const { return total_ > head_.size() + tail_.size(); }
  // head, then "[... N bytes not kept ...]" when truncated, then tail.
  std::string text() const;

 private:
  std::size_t head_limit_, tail_limit_;
  std::string head_, tail_;
  std::uint64_t total_ = 0;
};

struct ChildRequest {
  std::vector<std::string> argv;
  // The program, opened already (O_PATH): exec'd through it rather than by argv[0]'s path, so that the
  // file a session began with is the one each of its runs starts, whatever replaced it since (a rebuild
  // while a session runs); -1: argv[0].
  int exec_fd = -1;
  std::vector<std::string> env;  // "KEY=VALUE"
  double timeout_s = 300;
  int sample_interval_ms = 10;
  bool thread_states = true;   // also sample every thread's state (measure/thread_states)
  bool exact_states = false;   // record them exactly instead (measure/exact_recorder), where the kernel allows
  bool sampled_beside_exact = false;  // and sample them as well, to compare the two on the same run
  int event_fd = 3;            // where the child finds the event pipe
  // The token the runner was given (its --token): only its events carry it; empty: events not checked.
  std::string event_token;
  // Where the child finds a pipe that holds event_token and then its end, to read and close before the
  // case runs: the token on no command line (/proc/PID/cmdline is readable by the script); -1: none.
  int token_fd = -1;
  // Where the child finds the read end of a pipe whose write end only we hold, set up so that its
  // closing (our death, kill -9 included) SIGKILLs the child's whole process group; -1: none.
  int watch_fd = -1;
  // Called about once a second with the seconds the run has taken (a live progress line); empty: none.
  std::function<void(double)> on_tick;
  // Called once the child is spawned and its sampler set up (or once its spawn failed): the caller's own
  // work, done while the child starts on another CPU rather than before it; empty: none.
  std::function<void()> after_spawn;
  std::size_t head_limit = 1 << 20;
  std::size_t tail_limit = 1 << 16;
  const std::atomic<bool>* interrupt = nullptr;  // set by SIGINT: kill the tree, keep what we have
};

struct ChildResult {
  std::string spawn_error;  // non-empty: nothing ran
  pid_t pid = 0;
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  bool interrupted = false;
  rusage usage{};  // wait4: the child and every descendant it waited for
  std::int64_t spawned_at_ns = 0, reaped_at_ns = 0;  // CLOCK_MONOTONIC: just before vfork, as wait4 returned
  std::int64_t wall_ns() const { return reaped_at_ns - spawned_at_ns; }  // 0 when nothing ran
  protocol::EventLog events;         // every line of the event pipe, decoded as it arrived
  int event_fd = 3;                  // the event pipe's number in the child (for notes)
  bool events_closed_early = false;  // the event pipe reached EOF while the child was still running
  std::string stdout_text, stderr_text;
  std::uint64_t stdout_bytes = 0, stderr_bytes = 0;
  std::optional<TreeSummary> sampling;  // TreeSampler::summary(); none when nothing ran
  ThreadObservations threads;  // what the thread-state sampler read (empty when off)
  std::optional<ExactTrace> exact;  // what the exact recorder kept (when it was asked for and allowed)
  std::string exact_why_not;        // why it was asked for and not allowed (the sampler ran instead)
  int leftover_processes = 0;  // still alive after the root exited; killed
  // The finished run's descriptors (its pipes, pidfd and epoll set, the sampler's /proc files), closed
  // when the last copy of this goes: a session keeps it until the next run is spawned, so that a dozen
  // close() calls are not on the path from one run's reap to the next spawn. The run's processes are
  // all reaped by then and its process group released; nothing here is read again.
  std::shared_ptr<void> descriptors;
};

ChildResult run_child(const ChildRequest& request);

// Makes this process a child subreaper, so orphans of a run are re-parented here and can be reaped.
void become_subreaper();
// Reaps any exited re-parented orphans without blocking.
void reap_orphans();
// Kills the process group of the run in progress, if any (async-signal-safe: for SIGINT/SIGTERM handlers):
// ChildGroup::kill_active(), under the name main.cpp's handlers call.
inline void kill_active_child_tree() {
  ChildGroup::kill_active();
  RunCgroup::kill_active();  // and what left the group: the run's cgroup (run/run_cgroup)
}

}  // namespace gilhost
