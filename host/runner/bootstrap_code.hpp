#pragma once
// The bootstrap's code object for this run: read from the cache file (runner/bootstrap_cache), or compiled
// once and written there for the next run.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "python/capi.hpp"
#include "runner/bootstrap_cache.hpp"

namespace gilhost {

class BootstrapCode {
 public:
  // In the main interpreter, with its GIL held. An empty `cache_dir` turns the cache off.
  static BootstrapCode prepare(const py::Api& api, const std::string& cache_dir);

  // Runs the bootstrap's module code in `ns` of the current interpreter (main or sub), from the marshalled
  // code when there is some, else from source. False with the Python error set.
  bool exec_in(const py::Api& api, py::PyObject* ns) const;

  bool from_cache() const { return cached_.has_value(); }
  std::int64_t prepare_ns() const { return prepare_ns_; }

 private:
  std::string_view marshalled() const { return cached_ ? cached_->marshalled : std::string_view(compiled_); }
  std::optional<CachedBootstrap> cached_;  // the cache file, mapped
  std::string compiled_;  // else what this run compiled; neither: compile from source in exec_in
  std::int64_t prepare_ns_ = 0;
};

}  // namespace gilhost
