#pragma once
// A vfork that starts the child in a cgroup: clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP), Linux 5.7+.
//
// Why not vfork and a write to cgroup.procs in the child: moving a process between cgroups takes the
// kernel's cgroup_threadgroup_rwsem for writing, which waits for an RCU grace period unless another move
// came less than one before. With runs 20 ms or more apart, nearly every move waited 7-16 ms (30 moves
// 25 ms apart: 27 of them; docs/performance.md), so a no-op run took up to twice as long, at random. A
// process created in the cgroup is never moved.
#include <sys/types.h>

namespace gilhost {

// Calls `child(arg)` in a new process that shares this one's memory, on a stack of its own, and returns
// its pid once it has exec'd or exited (as vfork returns). `child` must not return: it execs or _exits,
// using system calls only, as after vfork. The process starts in the cgroup whose directory `cgroup_dir`
// is (an O_PATH or O_DIRECTORY descriptor). -1 with errno where this cannot be done: ENOSYS where the
// kernel has no clone3 or this build no implementation for the CPU (x86-64 only) or it runs under a
// sanitizer; EINVAL or E2BIG where clone3 has no CLONE_INTO_CGROUP; anything else the kernel refuses.
pid_t vfork_into_cgroup(int cgroup_dir, void (*child)(void*), void* arg);

}  // namespace gilhost
