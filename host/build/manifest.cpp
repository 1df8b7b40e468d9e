#include "build/manifest.hpp"

#include <filesystem>

#include "util/fd.hpp"

namespace gilhost {

namespace fs = std::filesystem;

nlohmann::json BuildManifest::to_json() const {
  return {{"format", 1},
          {"label", label},
          {"version", version},
          {"free_threaded", free_threaded},
          {"source", source},
          {"source_kind", source_kind},
          {"source_sha256", source_sha256},
          {"configure_args", configure_args},
          {"configure_command", configure_command},
          {"gilhost_version", gilhost_version},
          {"built_at", built_at},
          {"build_seconds", build_seconds},
          {"jobs", jobs},
          {"log", log}};
}

std::optional<BuildManifest> BuildManifest::from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", 0) != 1) return std::nullopt;
  try {
    BuildManifest m;
    m.label = j.at("label").get<std::string>();
    m.version = j.at("version").get<std::string>();
    m.free_threaded = j.at("free_threaded").get<bool>();
    m.source = j.value("source", "");
    m.source_kind = j.value("source_kind", "");
    m.source_sha256 = j.value("source_sha256", "");
    m.configure_args = j.value("configure_args", std::vector<std::string>{});
    m.configure_command = j.value("configure_command", std::vector<std::string>{});
    m.gilhost_version = j.value("gilhost_version", "");
    m.built_at = j.value("built_at", "");
    m.build_seconds = j.value("build_seconds", 0.0);
    m.jobs = j.value("jobs", 0);
    m.log = j.value("log", "");
    return m;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

bool BuildManifest::same_build_as(const BuildManifest& o) const {
  // A tarball is known by its checksum wherever it lies; a tree has none, so its place stands for it.
  const bool same_source = !source_sha256.empty() ? source_sha256 == o.source_sha256
                                                  : o.source_sha256.empty() && source == o.source;
  return same_source && free_threaded == o.free_threaded && configure_args == o.configure_args;
}

std::optional<BuildManifest> read_manifest(const std::string& build_dir) {
  try {
    return BuildManifest::from_json(nlohmann::json::parse(read_file((fs::path(build_dir) / kManifestName).string())));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void write_manifest(const std::string& build_dir, const BuildManifest& m) {
  write_file_atomic((fs::path(build_dir) / kManifestName).string(), m.to_json().dump(2) + "\n");
}

}  // namespace gilhost
