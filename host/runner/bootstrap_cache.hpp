#pragma once
// The runner's compiled bootstrap, kept on disk between runs.
//
// Compiling the bootstrap's ~170 lines costs a run ~2 ms (more than the rest of the runner's own start);
// loading the same code object with marshal costs ~0.05 ms. A cache file holds one build's marshalled code,
// keyed by the bootstrap's text and the interpreter's full version string (Py_GetVersion: version, build
// date, compiler, free-threading), so a different build or a changed bootstrap never reads it. The file is
// checked as a whole (header and checksum) and anything else is ignored: the runner then compiles.
#include <optional>
#include <string>
#include <string_view>

#include "util/mapped_file.hpp"

namespace gilhost {

// `dir`/bootstrap-<key>.marshal
std::string bootstrap_cache_path(const std::string& dir, const std::string& python_version);
// The file's bytes: a header naming the format, the version and the payload's checksum, then the payload.
std::string encode_bootstrap_cache(const std::string& python_version, const std::string& marshalled);
// The payload, if `file` is a whole, intact cache file for this version: a view into `file`.
std::optional<std::string_view> decode_bootstrap_cache(std::string_view file, const std::string& python_version);

// A cache file as it lies mapped (util/mapped_file), and its checked payload within it.
struct CachedBootstrap {
  MappedFile file;
  std::string_view marshalled;
};

// Never throw: a cache that cannot be read or written is only a slower run.
std::optional<CachedBootstrap> read_bootstrap_cache(const std::string& path, const std::string& python_version);
bool write_bootstrap_cache(const std::string& path, const std::string& python_version, const std::string& marshalled);

}  // namespace gilhost
