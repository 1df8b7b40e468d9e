#pragma once
// The cgroup (v2) every run's processes are kept in, so that nothing a run starts outlives gilhost, however
// gilhost ends (docs/architecture.md, "Nothing outlives gilhost").
//
// A process group is left by setsid(), and the watch pipe (run/child.cpp) signals only the group; a
// cgroup is left by no process of its own accord, and `cgroup.kill` SIGKILLs everything in it at once. But
// someone alive must write it: a guardian process, started with the session's cgroup and not in it, waits
// on a pipe whose write end only gilhost holds. When it closes (gilhost exited, or was killed, SIGKILL
// included) the guardian kills the cgroup, waits for it to empty, removes it and exits.
//
// Where no cgroup v2 can be made (not root, no delegated cgroup, no cgroup.kill: Linux < 5.14), `active()`
// is false and runs are contained as before: their process group and the watch pipe.
#include <sys/types.h>

#include <string>

#include "util/fd.hpp"

namespace gilhost {

class RunCgroup {
 public:
  // The session's cgroup, made (with its guardian) at the first call; the same one after.
  static const RunCgroup& session();
  bool active() const { return procs_fd_ >= 0; }
  const std::string& why_not() const { return why_not_; }  // when not active
  // `cgroup.procs`, open for writing: a child writes "0" to it before it execs, to join (-1: none).
  int procs_fd() const { return procs_fd_; }
  // The cgroup's directory (O_PATH) when a child can be made there by clone3 (util/clone_into_cgroup), in it
  // from its start, with no move and none of a move's wait; -1 when not active, once the cgroup was killed
  // (from then on Linux 6.18 kills a child clone3 makes in it as it is born: the kill's count is compared
  // with the parent's cgroup's), or once clone3 was found to lack CLONE_INTO_CGROUP. Then a child is made
  // by vfork and joins (procs_fd).
  int clone_dir_fd() const;
  // clone3 into the cgroup failed for want of the kernel's support (ENOSYS, EINVAL, E2BIG).
  static void clone_into_unsupported();
  // The cgroup's cgroup.procs, open for reading, when `pid` is in the cgroup (invalid when not active, or
  // when its join failed): every process it starts is then in it too, and the cgroup's files speak for
  // the whole tree. The tree sampler finds the run's processes in it (measure/sampler).
  UniqueFd procs_holding(pid_t pid) const;
  bool holds(pid_t pid) const { return procs_holding(pid).valid(); }
  // One of the cgroup's files, open for reading (invalid when not active): `cpu.stat`, what the tree
  // sampler watches to leave an idle tree unread (measure/sampler).
  UniqueFd open_for_reading(const char* name) const;
  // SIGKILL to every process in the cgroup, if it holds any (nothing when not active).
  void kill() const;
  // The same for the session's cgroup if it was made, whatever it holds (for SIGINT/SIGTERM handlers:
  // async-signal-safe).
  static void kill_active();

 private:
  RunCgroup();
  bool make(const std::string& parent);
  bool start_guardian();
  std::string dir_, why_not_;
  int procs_fd_ = -1, kill_fd_ = -1, dir_fd_ = -1;
  int procs_read_fd_ = -1;  // cgroup.procs, read to tell an empty cgroup
  int guard_fd_ = -1;  // the guardian's pipe, write end: open until we exit, which is its signal
};

}  // namespace gilhost
