#pragma once
// gilhost build: CPython from a tarball, a URL or a source tree, configured shared (with an rpath) into
// DATA/pythons/LABEL. It is built and installed (DESTDIR) in a temporary folder beside it, smoke-tested
// there, and only then renamed into place: a failed or interrupted build leaves nothing half-installed.
#include <atomic>
#include <string>
#include <vector>

#include "build/manifest.hpp"
#include "build/request.hpp"
#include "build/store.hpp"

namespace gilhost {

struct BuildEnvironment {
  std::string gilhost_version;
  std::string downloads_dir;                   // where URLs are downloaded (the cache)
  const std::atomic<int>* interrupt = nullptr;  // the signal that asks us to stop, or 0
  bool tty = false;                             // stderr is a terminal: a live progress line
};

struct BuildOutcome {
  bool built = false;  // false: the same build was there already
  std::string label;
  std::string path;
  BuildManifest manifest;
  std::vector<std::string> warnings;  // optional modules that were not built, and why
};

// Throws BuildError: exit status 2 for bad input, 1 for a failed step, 128+N for signal N.
BuildOutcome build_python(const BuildRequest& request, const BuildStore& store, const BuildEnvironment& env);

}  // namespace gilhost
