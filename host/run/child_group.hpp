#pragma once
// The process group of one spawned child, owned.
//
// The child leads a group of its own (it calls setpgid(0, 0) before exec), and everything the case starts
// stays in it unless it leaves on purpose (setsid). Until the leader is reaped its pid (the group's id)
// cannot be reused, and after that not while a member of the group lives: kill() reaches only the run.
// Its destructor SIGKILLs the group and reaps the leader if nobody did, then closes the watch pipe's
// write end (whose closing the kernel answers with SIGKILL to the group: run/child.cpp); so a run that
// ends by an exception leaves nothing behind either.
//
// A signal handler cannot reach a local object: each live ChildGroup registers its group id in a fixed
// table of lock-free slots on construction and clears it in its destructor, and kill_active() (async-
// signal-safe) SIGKILLs every registered group, for SIGINT/SIGTERM handlers that are about to end gilhost.
#include <sys/resource.h>
#include <sys/types.h>

#include "util/fd.hpp"

namespace gilhost {

class ChildGroup {
 public:
  ChildGroup() = default;  // owns nothing
  // `leader`: our child, the leader of its own group; <= 0 owns nothing. `watch_write`: the write end of
  // the child's watch pipe, held for as long as the group is ours (may be empty).
  explicit ChildGroup(pid_t leader, UniqueFd watch_write = UniqueFd());
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;
  ~ChildGroup();

  pid_t leader() const { return leader_; }
  bool owns_group() const { return leader_ > 0; }
  bool reaped() const { return reaped_; }

  // SIGKILL to every process in the group.
  void kill() const;
  // wait4 without blocking: true once the leader is reaped (status and rusage filled in then).
  bool try_reap(int& status, rusage& usage);

  // SIGKILL to the groups of every live ChildGroup (async-signal-safe).
  static void kill_active();

 private:
  pid_t leader_ = 0;
  bool reaped_ = false;
  int slot_ = -1;  // where it is registered for kill_active(); -1: the table was full
  UniqueFd watch_write_;
};

}  // namespace gilhost
