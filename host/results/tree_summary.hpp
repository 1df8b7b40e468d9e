#pragma once
// What the /proc sampler (measure/sampler) saw of a run's process tree: made by the sampler as the run
// ends, kept in the run's record, and written as its "rss" object (results/record_json).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gilhost {

// One row of the sampler's timeline: the peak of its bucket.
struct TimelinePoint {
  double t_ms = 0;
  double tree_rss_bytes = 0;
  int threads = 0, processes = 0;
};

// The /proc sampler's summary of the run's process tree.
struct TreeSummary {
  std::int64_t samples = 0;
  std::int64_t peak_tree_rss_bytes = 0, peak_root_rss_bytes = 0;
  int peak_threads = 0, peak_processes = 0;
  std::int64_t sampling_cost_ns = 0;
  // Of `samples`, those taken when the tree had used no CPU since the last one: the last sample stands,
  // nothing was read (measure/sampler.hpp, watch_tree_cpu).
  std::int64_t idle_samples = 0;
  std::optional<std::string> idle_check;  // how an idle tree was told (TreeSampler::idle_check)
  std::vector<TimelinePoint> timeline;
};

}  // namespace gilhost
