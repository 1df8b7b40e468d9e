#pragma once
// Shared by the report unit tests: the fixture results files (real runs of tests/fixtures/report_demo.toml
// and configs/race.toml, trimmed), loaded as the commands load them.
#include <cstdint>
#include <string>
#include <vector>

#include "report/merge.hpp"
#include "results/record.hpp"
#include "results/thread_states.hpp"
#include "report/model.hpp"

namespace report_test {

inline std::string fixture(const std::string& name) { return std::string(GILHOST_SOURCE_DIR) + "/tests/fixtures/" + name; }

// The same file as another machine would have written it: every meta's hostname replaced.
inline gilhost::LoadedResults on_host(gilhost::LoadedResults in, const std::string& host) {
  for (auto& line : in.lines)
    if (auto* meta = std::get_if<gilhost::MetaRecord>(&line)) meta->machine.value().hostname = host;
  return in;
}

inline gilhost::ReportModel demo_model(const std::string& baseline = "") {
  gilhost::ReportOptions o;
  o.baseline_python = baseline;
  return gilhost::build_report_model(gilhost::merge_files({fixture("report_demo.jsonl")}), o);
}

// One run of a case on a build: its wall time and round, CPU / wall 1, nothing else measured.
inline gilhost::RunRecord run_record(const std::string& experiment, const std::string& case_name,
                                     const std::string& build, double wall_ms, int repeat) {
  gilhost::RunRecord r;
  r.experiment = experiment;
  r.case_name = case_name;
  r.interpreter = build;
  r.python = build;
  r.repeat = repeat;
  r.round = repeat;
  r.wall_ns = static_cast<std::int64_t>(wall_ms * 1e6);
  r.cpu_per_wall = 1;
  return r;
}

// Thread states of `threads`, their GIL `gil` ("located", "none", ...), read every 10 ms; the Python
// threads' totals summed.
inline gilhost::ThreadStates states_of(std::vector<gilhost::ThreadRecord> threads, const std::string& gil = "located") {
  gilhost::ThreadStates s;
  s.interval_ms = 10;
  s.gil = gil;
  s.threads = std::move(threads);
  for (const auto& t : s.threads)
    if (t.python) s.python_totals += t.times;
  return s;
}

inline std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + needle.size())) ++n;
  return n;
}

}  // namespace report_test
