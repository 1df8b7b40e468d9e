#pragma once
// Several results files (several machines, several sessions) -> one stream of records, each tagged with
// where it came from, with interpreter labels kept distinct across machines.
#include <string>
#include <vector>

#include "results/record.hpp"
#include "results/results_file.hpp"

namespace gilhost {

struct MergeOptions {
  // How interpreter labels are made distinct:
  //   "auto": a label that runs on more than one host becomes "label@hostname" (elsewhere unchanged);
  //   "host": every label gets "@hostname";  "file": every label gets "@<file stem>";  "none": unchanged.
  std::string tag = "auto";
};

struct MergedResults {
  std::vector<ResultsLine> lines;      // metas and records, file after file, tagged
  std::vector<std::string> sources;    // the inputs, in order
  std::vector<std::string> relabeled;  // "3.12.1 -> 3.12.1@host-a"
  int malformed_lines = 0;
  // Lines whose identity (session id, index) was read before: a file given twice, merged files merged
  // again with one of their inputs. Counted once; this says how many were left out.
  int duplicate_lines = 0;
  std::vector<std::string> impossible;  // LoadedResults::impossible of every input
};

// Every record gets its origin: host (the hostname of the session it belongs to), source (the file it was
// read from) and session (index of its meta in that file); tags already present (a merged file merged
// again) are kept. Metas get source and session. Relabeled runs keep the label they had in
// original_interpreter (skips: original_label); relabeled meta interpreters in original_label.
MergedResults merge_results(std::vector<LoadedResults> inputs, const MergeOptions& options = {});
MergedResults merge_files(const std::vector<std::string>& paths, const MergeOptions& options = {},
                          const ReadOptions& read = {});

// "3.12.1@host-a" -> "3.12.1" when `host` is host-a; else the label unchanged.
std::string strip_host_tag(const std::string& label, const std::string& host);

}  // namespace gilhost
