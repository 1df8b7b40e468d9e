#pragma once
// Results as JSON Lines: a "meta" header, then one "run" (or "skip") record per line, each appended
// with one write() as soon as the run ends, so an interrupted or killed session keeps every finished run
// (the page cache holds it whatever happens to gilhost). fdatasync, against a crash of the machine
// itself, runs at most once a second and when the writer closes: one per record cost a run 0.2-10 ms on
// this VM's disk, more than the rest of the orchestrator's work. A machine crash loses at most the last
// second's records.
#include <cstdint>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/record.hpp"
#include "util/fd.hpp"

namespace gilhost {

// Every line it writes carries this session's identity (record.hpp, RecordOrigin): the meta its
// session_id, a run or skip the session_id and its index. It appends only to an empty file or to one that
// is a results file already: anything else (an experiment, a script) is refused, never appended to.
class ResultsWriter {
 public:
  // Creates parent folders; throws std::system_error, or std::runtime_error for a file that is not a
  // results file.
  explicit ResultsWriter(const std::string& path);
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;
  ~ResultsWriter();  // fdatasyncs what is not yet on disk
  void append(const MetaRecord& record);
  void append(const RunRecord& record);
  void append(const SkipRecord& record);
  const std::string& path() const { return path_; }
  const std::string& session_id() const { return session_id_; }
  // fdatasync now, if anything was written since the last one; throws on failure.
  void sync();

 private:
  void append_line(const nlohmann::json& record);
  void stamp(nlohmann::json& record);  // this session's identity, where the record has none
  std::string path_;
  std::string session_id_;
  std::int64_t next_index_ = 0;
  UniqueFd fd_;
  bool unsynced_ = false;
  bool regular_ = true;  // /dev/null and other devices take no fdatasync (EINVAL)
  std::int64_t last_sync_ns_ = 0;  // CLOCK_MONOTONIC of the last fdatasync (0: none yet)
};

// Why the file at `path` must not be appended to ("" when it may: missing, empty, not a regular file
// such as /dev/null, or a results file: its first line a gilhost record).
std::string not_results_file_reason(const std::string& path);

// One results file read in order: metas and records interleaved as written.
struct LoadedResults {
  std::string path;
  std::vector<ResultsLine> lines;
  int malformed_lines = 0;  // lines that are no JSON object, e.g. the last one cut by a crash
  // "FILE:LINE: why; its thread states left out": records read with figures no run can give
  // (results/validate), kept without those figures.
  std::vector<std::string> impossible;
};

struct ReadOptions {
  // false: each thread's timeline is left out as it is read, but for its lock waits, which the convoy
  // reading counts (a run's timelines are most of its size); what an export that streams them reads
  // first (report/trace, html), then each run again by its offset.
  bool timelines = true;
};

// Throws std::system_error when the file cannot be read; std::runtime_error "FILE:LINE: why" for a line
// it cannot use (a newer format, a run without its fields: rows of zeros would look like measurements),
// and "FILE: ..." when it holds no record at all. Read a line at a time: memory of the records, never of
// the file's text. Each run record gets its line's byte offset (RecordOrigin::offset).
LoadedResults load_results_ordered(const std::string& path, const ReadOptions& options = {});
// The same for the text of a file named `path` (what the fuzzer feeds it).
LoadedResults load_results_text(const std::string& text, const std::string& path);
// The run record whose line starts at byte `offset` of `path` (an offset load_results_ordered gave),
// its figures checked as on the first read. Throws as load_results_ordered.
RunRecord read_run_at(const std::string& path, std::int64_t offset);
// `light` (read without its timelines) read again, whole, from where it was read; throws
// std::runtime_error when the line there is no longer that run (the file changed under the reader).
RunRecord read_run_again(const RunRecord& light);
// Calls on_line(line, offset) for each line of the file (without its newline), reading 1 MiB at a time.
void for_each_line(const std::string& path, const std::function<void(std::string_view, std::int64_t)>& on_line);

// The file as JSON, unchecked: what tests and tools look at to see exactly what was written.
struct ResultsSet {
  std::vector<nlohmann::json> metas;  // one per session (merged files have several)
  std::vector<nlohmann::json> records;
  int malformed_lines = 0;
};
std::vector<nlohmann::json> read_json_lines(const std::string& path, int& malformed);
ResultsSet read_results(const std::string& path);

// Why a JSON object line of a results file cannot be used ("results format 999 is not ...", "a run record
// without \"case\", \"status\""), or "" when it can.
std::string results_line_problem(const nlohmann::json& line);
// "results/race-20261202-153012.jsonl"
std::string default_results_path(const std::string& experiment_name);

// JSON Lines text of records (what `gilhost merge` writes).
std::string to_jsonl(const std::vector<ResultsLine>& lines);
std::string to_jsonl_line(const ResultsLine& line);

}  // namespace gilhost
