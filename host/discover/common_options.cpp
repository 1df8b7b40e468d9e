#include "discover/common_options.hpp"

#include "discover/selector.hpp"

namespace gilhost {

Discovery discover_all(const CommonOptions& o, ProbeCache& cache) {
  DiscoverOptions d;
  for (std::string p : o.pythons)
    if (p.find('/') != std::string::npos) {
      strip_gil_suffix(p);  // a path+gil is that path's build, run with its GIL forced on
      d.explicit_paths.push_back(p);
    }
  d.selectors = o.pythons;
  if (o.no_discovery) d.use_path = d.use_pyenv = d.use_uv = d.use_gilhost_builds = false;
  return discover(d, cache);
}

Discovery discover_every(const CommonOptions& o, ProbeCache& cache) {
  CommonOptions every = o;
  every.pythons.clear();
  for (const auto& p : o.pythons)
    if (p.find('/') != std::string::npos) every.pythons.push_back(p);  // paths stay explicit, and skip nothing
  return discover_all(every, cache);
}

}  // namespace gilhost
