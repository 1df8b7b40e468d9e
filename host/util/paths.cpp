#include "util/paths.hpp"

#include <cstdlib>
#include <filesystem>

namespace gilhost {

std::string cache_dir() {
  namespace fs = std::filesystem;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".cache";
  return (base / "gilhost").string();
}

}  // namespace gilhost
