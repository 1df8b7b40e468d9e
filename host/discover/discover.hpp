#pragma once
// Finding Python builds: PATH, pyenv's versions folder, uv's managed installs, gilhost build's own builds,
// explicit paths.
#include <string>
#include <vector>

#include "discover/interpreter.hpp"
#include "discover/probe.hpp"

namespace gilhost {

struct DiscoverOptions {
  bool use_path = true;
  bool use_pyenv = true;
  bool use_uv = true;
  bool use_gilhost_builds = true;
  std::vector<std::string> explicit_paths;  // also from $GILHOST_PYTHONS (colon-separated)
  std::string path_env;                     // $PATH; empty: the process's own
  std::string pyenv_root;                   // empty: $PYENV_ROOT or ~/.pyenv
  std::string uv_dir;                       // empty: $UV_PYTHON_INSTALL_DIR or ~/.local/share/uv/python
  std::string builds_dir;                   // empty: builds_dir(), $XDG_DATA_HOME/gilhost/pythons
  // -p: a candidate whose path names a version none of these could pick is not probed (empty: all are).
  std::vector<std::string> selectors;
};

struct Candidate {
  std::string executable;
  std::string source;
};

struct DiscoveryProblem {
  std::string executable;
  std::string source;
  std::string reason;
};

struct Discovery {
  std::vector<Interpreter> found;  // sorted by version, GIL before free-threaded; labels assigned
  std::vector<DiscoveryProblem> problems;
};

// The executables to probe, deduplicated by real path, explicit ones first.
std::vector<Candidate> find_candidates(const DiscoverOptions& options);
Discovery discover(const DiscoverOptions& options, ProbeCache& cache);

}  // namespace gilhost
