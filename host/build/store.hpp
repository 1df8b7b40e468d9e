#pragma once
// gilhost build's data folder: the builds (pythons/LABEL), their logs (logs/) and the temporary folders
// builds are made in (tmp/, on the same filesystem, so a finished build moves into place by rename).
#include <optional>
#include <string>
#include <vector>

#include "build/manifest.hpp"

namespace gilhost {

struct InstalledBuild {
  std::string label;
  std::string path;
  std::optional<BuildManifest> manifest;  // nullopt: a folder gilhost did not make, or a broken one
};

class BuildStore {
 public:
  explicit BuildStore(std::string root);  // data_dir()
  const std::string& root() const { return root_; }
  std::string pythons_dir() const;
  std::string logs_dir() const;
  std::string tmp_dir() const;
  std::string build_path(const std::string& label) const;

  // Every folder of pythons/, by label.
  std::vector<InstalledBuild> list() const;
  // Moves the finished build at `staged` to pythons/LABEL. With `replace`, what is there is swapped out
  // and removed; without it, an existing folder is an error (std::runtime_error).
  void install(const std::string& staged, const std::string& label, bool replace) const;
  // Takes pythons/LABEL away (first out of pythons/, then deleted); false when there is none.
  bool remove(const std::string& label) const;

 private:
  std::string root_;
};

}  // namespace gilhost
