#pragma once
// The interpreter options the subcommands share (-p, --no-cache), and discovery as they ask for it.
#include <string>
#include <vector>

#include "discover/discover.hpp"
#include "discover/probe.hpp"

namespace gilhost {

struct CommonOptions {
  std::vector<std::string> pythons;  // selectors; paths are also probed
  bool no_cache = false;
  bool no_discovery = false;
};

// Every build found, plus the paths among the selectors (a path+gil probes that path).
Discovery discover_all(const CommonOptions& o, ProbeCache& cache);
// The same, but no build skipped for a version in its path that -p does not name: what an error that
// lists the usable builds needs.
Discovery discover_every(const CommonOptions& o, ProbeCache& cache);

}  // namespace gilhost
