#include "util/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <system_error>
#include <vector>

#include "util/private_files.hpp"

namespace gilhost {

namespace {
constexpr std::size_t kBufferBytes = 1 << 16;

// The temporary being written, for a Ctrl-C or SIGTERM that ends gilhost while it is (report -o of a
// long trace): removed by the signal's handler, which then ends the process as the signal would have.
// One at a time: gilhost writes one such file at once. (kill -9 leaves it: the next writer of the same
// destination removes it, remove_stale_temporaries.)
char g_live_temporary[4096];
volatile std::sig_atomic_t g_live = 0;

extern "C" void remove_live_temporary(int sig) {
  if (g_live) ::unlink(g_live_temporary);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Installs the handler where the signal would simply end the process (gilhost run has its own).
void watch_temporary(const std::string& tmp) {
  if (tmp.size() >= sizeof g_live_temporary) return;
  std::memcpy(g_live_temporary, tmp.c_str(), tmp.size() + 1);
  g_live = 1;
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_DFL) std::signal(sig, remove_live_temporary);
  }
}

void unwatch_temporary() { g_live = 0; }

// ".NAME.tmp.": the start of every temporary of the destination NAME. (Plain string work, no
// std::filesystem: the runner writes its caches through here; util/private_files says why.)
std::string temporary_prefix(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return "." + (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
}

// "dir/.NAME.tmp.PID.XXXXXX": hidden, beside the destination (a rename within one filesystem is atomic);
// the pid tells a later writer whether its writer still lives.
std::string temporary_template(const std::string& path) {
  return path_join(parent_folder(path), temporary_prefix(path) + std::to_string(::getpid()) + ".XXXXXX");
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

// Whether the temporary named `rest` (after the prefix: "PID.XXXXXX", or "XXXXXX" from before the pid
// was in the name), last written at `mtime`, is stale.
bool stale(const std::string& rest, std::time_t mtime, long max_age_s) {
  const std::size_t dot = rest.find('.');
  if (dot == std::string::npos) return std::time(nullptr) - mtime > max_age_s;  // no pid: by its age
  if (dot == 0 || dot > 9 || rest.find_first_not_of("0123456789") != dot) return false;
  const long pid = std::atol(rest.substr(0, dot).c_str());
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}
}  // namespace

int remove_stale_temporaries(const std::string& path, long max_age_s) {
  const std::string parent = parent_folder(path);
  const std::string dir = parent.empty() ? std::string(".") : parent;
  const std::string prefix = temporary_prefix(path);
  const std::unique_ptr<DIR, DirCloser> listing(::opendir(dir.c_str()));
  int removed = 0;
  while (const dirent* entry = listing ? ::readdir(listing.get()) : nullptr) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string file = path_join(dir, name);
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (stale(name.substr(prefix.size()), st.st_mtime, max_age_s) && ::unlink(file.c_str()) == 0) ++removed;
  }
  return removed;
}

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  remove_stale_temporaries(path);
  std::vector<char> name;
  const std::string templ = temporary_template(path);
  name.assign(templ.begin(), templ.end());
  name.push_back('\0');
  // mkostemp: O_RDWR|O_CREAT|O_EXCL (never follows a symlink at the name), mode 0600.
  fd_.reset(::mkostemp(name.data(), O_CLOEXEC));
  if (!fd_) throw std::system_error(errno, std::generic_category(), "cannot create a temporary file for " + path);
  tmp_ = name.data();
  watch_temporary(tmp_);
  ::fchmod(fd_.get(), 0644);  // as an ordinary file would be (mkstemp makes 0600)
}

AtomicFile::~AtomicFile() {
  unwatch_temporary();
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(int err, const std::string& what) {
  unwatch_temporary();
  fd_.reset();
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  throw std::system_error(err, std::generic_category(), what + " " + path_);
}

void AtomicFile::flush() {
  if (buffer_.empty()) return;
  if (!fd_) fail(EBADF, "cannot write");
  if (!write_all(fd_.get(), buffer_)) fail(errno, "cannot write");
  buffer_.clear();
}

void AtomicFile::write(std::string_view data) {
  written_ += data.size();
  if (buffer_.size() + data.size() > kBufferBytes) {
    flush();
    if (data.size() > kBufferBytes) {
      if (!write_all(fd_.get(), data.data(), data.size())) fail(errno, "cannot write");
      return;
    }
  }
  buffer_.append(data);
}

void AtomicFile::commit() {
  flush();
  if (::fsync(fd_.get()) != 0) fail(errno, "cannot write");
  if (::close(fd_.release()) != 0) fail(errno, "cannot write");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail(errno, "cannot rename the temporary file onto");
  committed_ = true;
  unwatch_temporary();
}

OutputSink::OutputSink(const std::string& path) : path_(path) {
  if (path.empty() || path == "-") return;  // stdout
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) {
    file_ = std::make_unique<AtomicFile>(path);
    return;
  }
  device_.reset(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!device_) throw std::system_error(errno, std::generic_category(), path);
}

void OutputSink::write(std::string_view data) {
  written_ += data.size();
  if (file_) return file_->write(data);
  const int fd = device_ ? device_.get() : 1;
  if (!write_all(fd, data.data(), data.size()))
    throw std::system_error(errno, std::generic_category(), device_ ? path_ : "stdout");
}

void OutputSink::finish() {
  if (file_) file_->commit();
}

}  // namespace gilhost
