#include "run/child_group.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <cerrno>

namespace gilhost {

namespace {
// Group ids of the live ChildGroups, 0 where free. Runs are one at a time today; the spare slots are
// for groups that overlap briefly (and cost a signal handler nothing).
std::array<std::atomic<pid_t>, 16> g_groups{};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read from a signal handler");

int register_group(pid_t group) {
  for (std::size_t i = 0; i < g_groups.size(); ++i) {
    pid_t expected = 0;
    if (g_groups[i].compare_exchange_strong(expected, group)) return static_cast<int>(i);
  }
  return -1;
}
}  // namespace

ChildGroup::ChildGroup(pid_t leader, UniqueFd watch_write) : leader_(leader > 0 ? leader : 0), watch_write_(std::move(watch_write)) {
  if (leader_ > 0) slot_ = register_group(leader_);
}

ChildGroup::~ChildGroup() {
  if (leader_ > 0 && !reaped_) {
    kill();
    while (::waitpid(leader_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (slot_ >= 0) g_groups[static_cast<std::size_t>(slot_)].store(0);
  // Last, once the group is dead or reaped: the kernel's SIGKILL on its closing then reaches nobody new.
  watch_write_.reset();
}

void ChildGroup::kill() const {
  if (leader_ > 0) ::kill(-leader_, SIGKILL);
}

bool ChildGroup::try_reap(int& status, rusage& usage) {
  if (leader_ <= 0 || reaped_) return reaped_;
  reaped_ = ::wait4(leader_, &status, WNOHANG, &usage) == leader_;
  return reaped_;
}

void ChildGroup::kill_active() {
  for (const auto& group : g_groups) {
    const pid_t g = group.load();
    if (g > 0) ::kill(-g, SIGKILL);
  }
}

}  // namespace gilhost
