#pragma once
// Several results files (several machines, several sessions) -> one stream of records, each tagged with
// where it came from, with interpreter labels kept distinct across machines.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost {

// One results file read in order: metas and records interleaved as written.
struct LoadedResults {
  std::string path;
  std::vector<nlohmann::json> lines;  // every well-formed object, meta or record, in file order
  int malformed_lines = 0;
};

// Throws std::system_error when the file cannot be read; std::runtime_error "FILE:LINE: why" for a record
// it cannot use (results_line_problem), and "FILE: ..." when it holds no record at all.
LoadedResults load_results_ordered(const std::string& path);

struct MergeOptions {
  // How interpreter labels are made distinct:
  //   "auto": a label that runs on more than one host becomes "label@hostname" (elsewhere unchanged);
  //   "host": every label gets "@hostname";  "file": every label gets "@<file stem>";  "none": unchanged.
  std::string tag = "auto";
};

struct MergedResults {
  std::vector<nlohmann::json> lines;   // metas and records, file after file, tagged
  std::vector<std::string> sources;    // the inputs, in order
  std::vector<std::string> relabeled;  // "3.12.1 -> 3.12.1@host-a"
  int malformed_lines = 0;
};

// Every record gets "host" (the hostname of the session it belongs to), "source" (the file it was read
// from) and "session" (index of its meta in that file); tags already present (a merged file merged
// again) are kept. Metas get "source" and "session". Relabeled records keep the label they had in
// "original_interpreter" (skips: "original_label"); relabeled meta interpreters in "original_label".
MergedResults merge_results(std::vector<LoadedResults> inputs, const MergeOptions& options = {});
MergedResults merge_files(const std::vector<std::string>& paths, const MergeOptions& options = {});

// JSON Lines text of the merged stream (what `gilhost merge` writes).
std::string to_jsonl(const MergedResults& merged);

// "3.12.1@host-a" -> "3.12.1" when `host` is host-a; else the label unchanged.
std::string strip_host_tag(const std::string& label, const std::string& host);

}  // namespace gilhost
