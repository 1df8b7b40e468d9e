#pragma once
// The record each build folder keeps of how it was made (DATA/pythons/LABEL/gilhost-build.json).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost {

inline constexpr const char* kManifestName = "gilhost-build.json";

struct BuildManifest {
  std::string label;
  std::string version;  // PY_VERSION of the source
  bool free_threaded = false;
  std::string source;         // the tarball's absolute path, the URL, or the tree's absolute path
  std::string source_kind;    // "tarball", "url", "tree"
  std::string source_sha256;  // of the tarball; empty for a tree
  std::vector<std::string> configure_args;     // the user's, after --
  std::vector<std::string> configure_command;  // all of it, as run
  std::string gilhost_version;
  std::string built_at;  // UTC, ISO 8601
  double build_seconds = 0;
  int jobs = 0;
  std::string log;

  nlohmann::json to_json() const;
  // nullopt when `j` is not a manifest.
  static std::optional<BuildManifest> from_json(const nlohmann::json& j);
  // The same build: the same source (its checksum; a tree's path), GIL choice and configure arguments.
  bool same_build_as(const BuildManifest& other) const;
};

// The manifest in `build_dir`, or nullopt when there is none or it cannot be read.
std::optional<BuildManifest> read_manifest(const std::string& build_dir);
void write_manifest(const std::string& build_dir, const BuildManifest& manifest);

}  // namespace gilhost
