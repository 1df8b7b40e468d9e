#include "runner/bootstrap_cache.hpp"

#include <algorithm>

#include "runner/bootstrap.hpp"
#include "util/checksum.hpp"
#include "util/fd.hpp"
#include "util/private_files.hpp"

namespace gilhost {

namespace {
constexpr const char* kBootstrapMagic = "gilhost-bootstrap 2";  // 2: the payload checked with fnv1a64_words

// The first two header lines (a version string has no newline, but the header must stay three lines).
std::string head(const std::string& python_version) {
  std::string version = python_version;
  std::replace(version.begin(), version.end(), '\n', ' ');
  return std::string(kBootstrapMagic) + "\n" + version + "\n";
}
}  // namespace

std::string bootstrap_cache_path(const std::string& dir, const std::string& python_version) {
  const std::uint64_t key = fnv1a64(python_version, bootstrap_source_hash());
  return path_join(dir, "bootstrap-" + hex64(key) + ".marshal");
}

// Three header lines: magic, the version string with newlines escaped, "<payload size> <checksum>".
std::string encode_bootstrap_cache(const std::string& python_version, const std::string& marshalled) {
  return head(python_version) + std::to_string(marshalled.size()) + " " +
         hex64(fnv1a64_words(marshalled)) + "\n" + marshalled;
}

std::optional<std::string_view> decode_bootstrap_cache(std::string_view file, const std::string& python_version) {
  const std::string expected_head = head(python_version);
  if (file.substr(0, expected_head.size()) != expected_head) return std::nullopt;
  const std::size_t eol = file.find('\n', expected_head.size());
  if (eol == std::string_view::npos) return std::nullopt;
  const std::string_view sizes = file.substr(expected_head.size(), eol - expected_head.size());
  const std::size_t space = sizes.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view payload = file.substr(eol + 1);
  if (sizes.substr(0, space) != std::to_string(payload.size())) return std::nullopt;
  if (sizes.substr(space + 1) != hex64(fnv1a64_words(payload))) return std::nullopt;
  return payload;
}

std::optional<CachedBootstrap> read_bootstrap_cache(const std::string& path, const std::string& python_version) {
  try {
    // Code that will run: only from a file of ours that no one else may write (util/paths).
    std::optional<MappedFile> file = MappedFile::open_private(path);
    if (!file) return std::nullopt;
    const std::optional<std::string_view> payload = decode_bootstrap_cache(file->bytes(), python_version);
    if (!payload) return std::nullopt;
    return CachedBootstrap{std::move(*file), *payload};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool write_bootstrap_cache(const std::string& path, const std::string& python_version, const std::string& marshalled) {
  try {
    ensure_private_dir(parent_folder(path));
    write_file_atomic(path, encode_bootstrap_cache(python_version, marshalled));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace gilhost
