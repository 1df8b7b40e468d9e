#include "util/clone_into_cgroup.hpp"

#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GILHOST_NO_CLONE3 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GILHOST_NO_CLONE3 1
#endif

namespace gilhost {

#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP) && !defined(GILHOST_NO_CLONE3)

extern "C" long gilhost_clone3_call(clone_args* args, unsigned long size, void (*child)(void*), void* arg);

// The child starts at the instruction after `syscall`, on the new stack, with the parent's registers but
// rax (0) and rcx and r11 (the kernel's): so `child` stays in rdx and `arg` is kept in r8. It calls
// child(arg), which does not return; if it did, the child exits with 127. The parent returns the pid or
// -errno. (glibc's clone() does the same for clone(2); it has no clone3 with a cgroup before 2.39.)
asm(R"(
    .text
    .globl gilhost_clone3_call
    .type gilhost_clone3_call, @function
gilhost_clone3_call:
    movq %rcx, %r8
    movl $435, %eax
    syscall
    testq %rax, %rax
    jnz 1f
    xorl %ebp, %ebp
    movq %r8, %rdi
    callq *%rdx
    movl $127, %edi
    movl $60, %eax
    syscall
    hlt
1:
    ret
    .size gilhost_clone3_call, .-gilhost_clone3_call
    .section .note.GNU-stack,"",@progbits
    .text
)");

pid_t vfork_into_cgroup(int cgroup_dir, void (*child)(void*), void* arg) {
  // The child's stack, one per thread of ours that spawns (a spawn suspends only its own thread). 64 KiB:
  // the child makes system calls and little else.
  constexpr std::size_t kStack = 64 * 1024;
  static thread_local std::vector<std::uint64_t> stack(kStack / sizeof(std::uint64_t));
  clone_args args{};
  args.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<std::uint64_t>(stack.data());
  args.stack_size = kStack;  // the kernel starts the child at stack + stack_size, 16-byte aligned
  args.cgroup = static_cast<std::uint64_t>(cgroup_dir);
  const long r = gilhost_clone3_call(&args, sizeof args, child, arg);
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return static_cast<pid_t>(r);
}

#else

pid_t vfork_into_cgroup(int, void (*)(void*), void*) {
  errno = ENOSYS;
  return -1;
}

#endif

}  // namespace gilhost
