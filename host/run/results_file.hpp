#pragma once
// Results as JSON Lines: a "meta" header, then one "run" (or "skip") record per line, each appended
// with one write() as soon as the run ends, so an interrupted session keeps every finished run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/fd.hpp"

namespace gilhost {

class ResultsWriter {
 public:
  explicit ResultsWriter(const std::string& path);  // creates parent folders; throws on failure
  void append(const nlohmann::json& record);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  UniqueFd fd_;
};

struct ResultsSet {
  std::vector<nlohmann::json> metas;  // one per session (merged files have several)
  std::vector<nlohmann::json> records;
  int malformed_lines = 0;  // e.g. a last line cut by a crash
};

// Every JSON object line of a results file, in order; lines that are not one (e.g. the last line cut by
// a crash) are skipped and counted in `malformed`.
std::vector<nlohmann::json> read_json_lines(const std::string& path, int& malformed);
ResultsSet read_results(const std::string& path);

// The results format this gilhost writes and reads (the meta record's "format").
constexpr int kResultsFormat = 1;
// Why a JSON object line of a results file cannot be used ("results format 999 is not ...", "a run record
// without \"case\", \"status\""), or "" when it can: a meta of a format we read, a run with the fields
// every report needs, a skip.
std::string results_line_problem(const nlohmann::json& line);
// "results/race-20261202-153012.jsonl"
std::string default_results_path(const std::string& experiment_name);

}  // namespace gilhost
