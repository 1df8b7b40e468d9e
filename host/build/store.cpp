#include "build/store.hpp"

#include <fcntl.h>
#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "util/temp_dir.hpp"

namespace fs = std::filesystem;

namespace gilhost {

BuildStore::BuildStore(std::string root) : root_(std::move(root)) {}

std::string BuildStore::pythons_dir() const { return (fs::path(root_) / "pythons").string(); }
std::string BuildStore::logs_dir() const { return (fs::path(root_) / "logs").string(); }
std::string BuildStore::tmp_dir() const { return (fs::path(root_) / "tmp").string(); }
std::string BuildStore::build_path(const std::string& label) const { return (fs::path(pythons_dir()) / label).string(); }

std::vector<InstalledBuild> BuildStore::list() const {
  std::vector<InstalledBuild> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(pythons_dir(), ec)) {
    if (!e.is_directory(ec)) continue;
    out.push_back({e.path().filename().string(), e.path().string(), read_manifest(e.path().string())});
  }
  std::sort(out.begin(), out.end(), [](const InstalledBuild& a, const InstalledBuild& b) { return a.label < b.label; });
  return out;
}

void BuildStore::install(const std::string& staged, const std::string& label, bool replace) const {
  fs::create_directories(pythons_dir());
  const std::string target = build_path(label);
  std::error_code ec;
  if (!fs::exists(target, ec)) {
    // rename() of a folder onto a missing name: atomic, and it fails rather than merge if one appears.
    if (::rename(staged.c_str(), target.c_str()) != 0)
      throw std::system_error(errno, std::generic_category(), "rename " + staged + " -> " + target);
    return;
  }
  if (!replace) throw std::runtime_error(target + " exists");
  // Swap the two in one step, so pythons/LABEL is never missing; the old build ends up at `staged`.
  if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staged, ec);
    return;
  }
  // A filesystem without RENAME_EXCHANGE: move the old one aside first.
  TempDir old = TempDir::owned(tmp_dir(), "replaced-" + label);
  const std::string aside = (fs::path(old.path()) / "build").string();
  fs::rename(target, aside);
  fs::rename(staged, target);
}

bool BuildStore::remove(const std::string& label) const {
  const std::string target = build_path(label);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(target, ec))) return false;
  // Out of pythons/ in one rename (discovery never sees half a build), then deleted with the TempDir.
  TempDir gone = TempDir::owned(tmp_dir(), "removed-" + label);
  fs::rename(target, fs::path(gone.path()) / "build");
  return true;
}

}  // namespace gilhost
