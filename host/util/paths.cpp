#include "util/paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace gilhost {

namespace fs = std::filesystem;

namespace {

fs::path home() {
  const char* h = std::getenv("HOME");
  return h && *h ? fs::path(h) : fs::path("/tmp");
}

}  // namespace

std::string cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : home() / ".cache";
  return (base / "gilhost").string();
}

std::string data_dir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const fs::path base = xdg && *xdg == '/' ? fs::path(xdg) : home() / ".local" / "share";
  return (base / "gilhost").lexically_normal().string();
}

std::string builds_dir() { return (fs::path(data_dir()) / "pythons").string(); }

std::string companion_program(const std::string& name) {
  std::error_code ec;
  const fs::path bin = fs::read_symlink("/proc/self/exe", ec).parent_path();
  const fs::path beside = bin / name;
  const fs::path installed = (bin.parent_path() / "libexec" / "gilhost" / name).lexically_normal();
  for (const fs::path& p : {beside, installed})
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  return beside.string();
}

}  // namespace gilhost
