#include "run/run_cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace gilhost {

namespace {

std::atomic<int> g_kill_fd{-1};  // the session cgroup's cgroup.kill, for kill_active()
std::atomic<bool> g_killed{false};        // the cgroup was killed: clone_dir_fd() -1 from then on
std::atomic<bool> g_no_clone_into{false};  // clone3 has no CLONE_INTO_CGROUP here (clone_into_unsupported)

// Where this process's cgroup is in the cgroup v2 hierarchy, as a path of this machine; "" when there is
// no v2 hierarchy mounted (or we are not in it).
std::string own_cgroup_dir() {
  std::string rel;
  {
    std::ifstream in("/proc/self/cgroup");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("0::", 0) == 0) rel = line.substr(3);
  }
  if (rel.empty()) return "";
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER
    const auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev, root, mount;
    fields >> id >> parent >> dev >> root >> mount;
    if (root == "/") return mount + (rel == "/" ? "" : rel);
    if (rel.rfind(root, 0) == 0) return mount + rel.substr(root.size());
  }
  return "";
}

// The guardian's life: until the pipe's write end closes (gilhost is gone), then everything in the cgroup
// killed, the cgroup removed. In a forked child of gilhost: system calls only.
[[noreturn]] void guard(int watch, int kill_fd, const char* events_path, const char* dir) {
  ::setsid();  // out of gilhost's process group and terminal: its Ctrl-C and group kills are not ours
  // None of gilhost's descriptors held on (its output pipes, its session lock): only the two we need.
  const int devnull = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) ::dup2(devnull, fd);
  const unsigned lo = static_cast<unsigned>(std::min(watch, kill_fd)), hi = static_cast<unsigned>(std::max(watch, kill_fd));
  ::syscall(SYS_close_range, 3u, lo - 1, 0u);
  ::syscall(SYS_close_range, lo + 1, hi - 1, 0u);
  ::syscall(SYS_close_range, hi + 1, ~0u, 0u);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  char byte;
  while (::read(watch, &byte, 1) != 0 && errno == EINTR) {
  }
  for (int round = 0; round < 500; ++round) {  // until it is empty, up to 5 s
    ssize_t ignored = ::write(kill_fd, "1", 1);
    (void)ignored;
    char buf[256] = {};
    const int fd = ::open(events_path, O_RDONLY | O_CLOEXEC);
    const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) ::close(fd);
    if (n > 0 && std::strstr(buf, "populated 0")) break;
    const timespec ts{0, 10000000};
    ::nanosleep(&ts, nullptr);
  }
  ::rmdir(dir);
  ::_exit(0);
}

}  // namespace

RunCgroup::RunCgroup() {
  const std::string parent = own_cgroup_dir();
  if (parent.empty()) {
    why_not_ = "no cgroup v2 hierarchy is mounted";
    return;
  }
  if (!make(parent) || !start_guardian()) {
    if (procs_fd_ >= 0) ::close(procs_fd_);
    if (kill_fd_ >= 0) ::close(kill_fd_);
    procs_fd_ = kill_fd_ = -1;
    ::rmdir(dir_.c_str());
    return;
  }
  g_kill_fd.store(kill_fd_);
  dir_fd_ = ::open(dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  procs_read_fd_ = ::open((dir_ + "/cgroup.procs").c_str(), O_RDONLY | O_CLOEXEC);
}

bool RunCgroup::make(const std::string& parent) {
  dir_ = parent + "/gilhost-" + std::to_string(::getpid());
  if (::mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
    why_not_ = "cannot make a cgroup in " + parent + ": " + std::strerror(errno);
    return false;
  }
  kill_fd_ = ::open((dir_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC);
  if (kill_fd_ < 0) {
    why_not_ = "the cgroup has no cgroup.kill (Linux 5.14 or newer has): " + std::string(std::strerror(errno));
    return false;
  }
  procs_fd_ = ::open((dir_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (procs_fd_ < 0) why_not_ = "cannot open the cgroup's cgroup.procs: " + std::string(std::strerror(errno));
  return procs_fd_ >= 0;
}

// Forked twice, so that it is not our child (our tree sampler walks our children as the run's) and is
// re-parented past us: we are a subreaper while we run, so we stop being one while it is made.
bool RunCgroup::start_guardian() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    why_not_ = std::string("pipe2: ") + std::strerror(errno);
    return false;
  }
  const std::string events = dir_ + "/cgroup.events";
  int subreaper = 0;
  ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
  if (subreaper) ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  const pid_t mid = ::fork();
  if (mid == 0) {
    ::close(fds[1]);
    if (::fork() == 0) guard(fds[0], kill_fd_, events.c_str(), dir_.c_str());
    // The guardian is out; this process joins the cgroup, to learn whether a run's child can (a cgroup
    // whose parent has processes and controllers, or not ours to write, refuses).
    ::_exit(::write(procs_fd_, "0", 1) == 1 ? 0 : 1);
  }
  int status = -1;
  if (mid > 0)
    while (::waitpid(mid, &status, 0) < 0 && errno == EINTR) {
    }
  if (subreaper) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::close(fds[0]);
  if (mid < 0 || status != 0) {
    ::close(fds[1]);  // the guardian, if there is one, removes the cgroup and exits
    why_not_ = mid < 0 ? std::string("fork: ") + std::strerror(errno) : "a process cannot join the cgroup " + dir_;
    return false;
  }
  // Kept open, never written, for as long as we live: its closing is what the guardian waits for.
  guard_fd_ = fds[1];
  return true;
}

const RunCgroup& RunCgroup::session() {
  static const RunCgroup cgroup;
  return cgroup;
}

UniqueFd RunCgroup::procs_holding(pid_t pid) const {
  // cgroup.procs lists its processes one a line; the run's child joined before it exec'd. Read through
  // the descriptor kept open, and handed out as a copy of it (its readers pread at 0): a run's path walks
  // through cgroupfs cost more than the reads (docs/performance.md, "The orchestrator's own CPU").
  if (!active() || procs_read_fd_ < 0) return {};
  std::vector<pid_t> members;
  read_pid_list(procs_read_fd_, members);
  if (std::find(members.begin(), members.end(), pid) == members.end()) return {};
  return UniqueFd(::fcntl(procs_read_fd_, F_DUPFD_CLOEXEC, 0));
}

UniqueFd RunCgroup::open_for_reading(const char* name) const {
  if (!active()) return {};
  if (dir_fd_ >= 0) return UniqueFd(::openat(dir_fd_, name, O_RDONLY | O_CLOEXEC));
  return UniqueFd(::open((dir_ + "/" + name).c_str(), O_RDONLY | O_CLOEXEC));
}

void RunCgroup::kill() const {
  if (kill_fd_ < 0) return;
  char first;  // an empty cgroup.procs: nobody to kill, and the cgroup stays one clone3 can make children in
  if (procs_read_fd_ >= 0 && ::pread(procs_read_fd_, &first, 1, 0) == 0) return;
  g_killed = true;
  ssize_t ignored = ::write(kill_fd_, "1", 1);
  (void)ignored;
}

void RunCgroup::kill_active() {
  const int fd = g_kill_fd.load();
  if (fd >= 0) {
    g_killed = true;
    ssize_t ignored = ::write(fd, "1", 1);
    (void)ignored;
  }
}

int RunCgroup::clone_dir_fd() const { return g_killed.load() || g_no_clone_into.load() ? -1 : dir_fd_; }

void RunCgroup::clone_into_unsupported() { g_no_clone_into = true; }

}  // namespace gilhost
