#pragma once
// Small helpers shared by the unit tests: temporary folders, files, and process checks.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace gilhost_test {

namespace fs = std::filesystem;

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/gilhost-unit-XXXXXX";
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  fs::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  fs::path path_;
};

// Sets (or unsets, with nullptr) an environment variable for one scope; the processes a test starts
// inherit it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// Writes `content` to `path` (creating parent folders); `executable` sets mode 0755.
inline void write_file(const fs::path& path, const std::string& content, bool executable = false) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path.string());
    out << content;
  }
  if (executable) ::chmod(path.c_str(), 0755);
}

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The state letter of /proc/PID/stat ('R', 'S', 'Z', ...), or 0 when there is no such process.
inline char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return 0;
  return text[close + 2];
}

// True when `pid` no longer runs: gone, or a zombie waiting to be reaped. Killed processes take a
// moment to die, so this waits up to `grace_ms` for it (a bound, not a measurement).
inline bool process_gone(pid_t pid, int grace_ms = 2000) {
  for (int waited = 0;; waited += 5) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    char st = process_state(pid);
    if (st == 0 || st == 'Z' || st == 'X') return true;
    if (waited >= grace_ms) return false;
    ::usleep(5000);
  }
}

// The first executable called `name` on $PATH, or empty.
inline std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string all = path ? path : "";
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string dir = all.substr(start, end - start);
    if (!dir.empty()) {
      std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return "";
}

// The real interpreter behind `python3` on $PATH (not a pyenv shim, so each run starts fast), or empty.
inline std::string real_python3() {
  static const std::string path = [] {
    if (find_on_path("python3").empty()) return std::string();
    gilhost::Captured c = gilhost::run_capture({"python3", "-c", "import sys; print(sys.executable)"}, 30);
    return c.exit_code == 0 ? gilhost::trim(c.out) : std::string();
  }();
  return path;
}

}  // namespace gilhost_test
