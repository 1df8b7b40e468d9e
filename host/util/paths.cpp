#include "util/paths.hpp"

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

}  // namespace gilhost
