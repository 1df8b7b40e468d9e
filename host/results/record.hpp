#pragma once
// The records of a results file as the program uses them (docs/results-format.md): one session's meta
// record, one record per measured run, one per build or case that did not run. JSON appears only in
// results/record_json (the file's edge); what stays JSON here is what a script handed over (its result,
// metrics, marks, params) and the experiment as its file described it, which reports only display.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/view.hpp"
#include "results/thread_states.hpp"
#include "results/tree_summary.hpp"

namespace gilhost {

struct Interpreter;

// How a run ended.
enum class RunStatus { ok, error, timeout, crashed, interrupted };
const char* status_name(RunStatus status);
std::optional<RunStatus> parse_status(const std::string& name);

// Where a record came from, as `merge` tags it (empty / nullopt in a file written by `run`), and its
// identity, as `run` writes it: the session's id and the record's index in that session (runs and skips
// counted together, from 0). Readers de-duplicate on the identity (a file read twice, merged twice) and
// pick a session by its id, not by position (two sessions appending to one file interleave); files
// written before identities (no session_id) fall back to position.
struct RecordOrigin {
  std::string session_id;            // 32 hex digits; "" in older files
  std::optional<std::int64_t> index;  // nullopt in older files
  // The file it was read from now and where its line starts there (not written: a reader's own, to
  // read the run again, whole); "" and -1 unknown.
  std::string read_from;
  std::int64_t offset = -1;
  // Set only for a run read without its timelines (results/results_file): read_run_again gives it whole.
  bool can_read_again() const { return offset >= 0 && !read_from.empty(); }
  std::string host;    // hostname of the session's machine
  std::string source;  // the results file it was read from
  std::optional<int> session;  // index of its meta record in that file
};

// The case's own CPU use: getrusage deltas around the case in the child.
struct CaseCpu {
  std::int64_t user_ns = 0, sys_ns = 0, children_user_ns = 0, children_sys_ns = 0, cpu_ns = 0;
  std::int64_t voluntary_switches = 0, involuntary_switches = 0;
};

// The exception a case raised (or gilhost's own reason it could not start).
struct RunError {
  std::string type, qualname, message;
};

// One expectation checked against a run.
struct ExpectationOutcome {
  std::string expect;  // "result == 4000000"
  bool ok = false;
  std::string detail;  // why it failed
};

struct RunRecord {
  // What ran, on which build, where in the session.
  std::string experiment, case_name, base_case;
  nlohmann::json params = nlohmann::json::object(), sweep = nlohmann::json::object();
  std::string interpreter;  // the build's label
  std::string python;       // its full version
  std::string executable;
  bool free_threaded = false;
  std::string mode;  // embed, exec, subinterpreters
  int subinterpreters = 0;
  std::string gil;  // own / shared for subinterpreter cases
  int round = 0, repeat = 0;
  bool warmup = false;
  std::int64_t time_unix_ns = 0;
  // The machine's 1-minute load average as the run ended (/proc/loadavg): what says a cell's spread came
  // from other work; nullopt where it was not read (older files).
  std::optional<double> load_avg;

  // How it ended.
  RunStatus status = RunStatus::ok;
  int exit_code = 0, signal = 0;
  std::string note;
  // Why its cell's later runs were not run (run/cell_stop: the time budget, failed first round); "" else.
  std::string stopped;
  // Failed runs: where the run's full stderr was written beside the results file; "" else.
  std::string stderr_file;

  // Times (ns).
  std::int64_t wall_ns = 0;
  std::string wall_from;  // runner, or parent (the fallback)
  std::int64_t parent_wall_ns = 0, init_ns = 0, prepare_ns = 0, finalize_ns = 0;
  std::optional<std::int64_t> bootstrap_ns;  // embed mode only
  std::optional<std::int64_t> import_ns;     // of prepare_ns, the script's import or compile (protocol::Outcome)
  // The rest of the child's life, where gilhost-runner said when (embed and subinterpreter modes): spawn
  // to the runner's main() (exec, the dynamic loader), dlopen of libpython and its symbols, and the
  // finalized event to the reap (the runner's exit).
  std::optional<std::int64_t> exec_ns, load_ns, exit_ns;
  bool bootstrap_cached = false;
  // Locating the main interpreter's GIL (thread states on, the runner's modes), and whether its offset
  // came from the runner's per-build cache.
  std::optional<std::int64_t> locate_ns;
  bool locate_cached = false;

  // CPU and memory.
  std::optional<CaseCpu> cpu;  // absent when the case never reported
  double cpu_per_wall = 0;
  std::int64_t tree_cpu_ns = 0, max_rss_kb = 0;
  std::optional<TreeSummary> rss;
  // Where each thread's time went (measure/thread_states); absent when thread states were off, or in an
  // older file.
  std::optional<ThreadStates> thread_states;
  // The sampler's, beside the exact ones on the same run (--thread-states both): to compare the two.
  std::optional<ThreadStates> thread_states_sampled;

  // What the case returned.
  bool has_result = false;
  nlohmann::json result;
  std::optional<RunError> error;
  nlohmann::json metrics = nlohmann::json::object(), marks = nlohmann::json::array();

  // The GIL.
  std::optional<bool> gil_enabled, gil_enabled_before;  // nullopt: the results do not say
  bool gil_forced = false;
  std::vector<std::string> gil_reenabled_by;
  std::optional<std::int64_t> threads_alive_at_end;
  std::optional<nlohmann::json> per_interpreter;  // subinterpreter cases: each one's outcome

  // Output and leftovers.
  std::string stdout_text, stderr_text;
  std::int64_t stdout_bytes = 0, stderr_bytes = 0;
  int leftover_processes = 0;

  // Expectations.
  std::vector<ExpectationOutcome> expect;
  bool expect_ok = true;

  RecordOrigin origin;
  std::optional<std::string> original_interpreter;  // the label before `merge` tagged it

  bool is_ok() const { return status == RunStatus::ok; }
  // A measured run that ended ok with a wall time: what ratios and wall statistics count.
  bool measured_ok() const { return !warmup && is_ok() && wall_ns > 0; }
};

// A build or a case x build that did not run.
struct SkipRecord {
  std::string experiment;
  std::string selector;     // a selector that picked nothing usable
  std::string case_name;    // a case that cannot run on a build
  std::string label;        // the build a selector found
  std::string interpreter;  // the build a case was skipped on
  std::string reason;
  RecordOrigin origin;
  std::optional<std::string> original_label;  // the label before `merge` tagged it

  // The build it names, whichever field says it.
  std::string build() const { return !label.empty() ? label : !interpreter.empty() ? interpreter : selector; }

  // A selector that found nothing usable (it names what it found, if anything).
  static SkipRecord of_selector(std::string experiment, std::string selector, std::string label, std::string reason);
  // A case that cannot run on a build.
  static SkipRecord of_case(std::string experiment, std::string case_name, std::string interpreter, std::string reason);
};

struct MachineRecord {
  std::string hostname, kernel, arch, cpu_model;
  int cores = 0;  // usable by the process
  int online_cpus = 0;
  std::int64_t memory_bytes = 0;
};

// One selected build as the meta record lists it.
struct BuildRecord {
  std::string label, version, executable, realpath, source, implementation;
  bool free_threaded = false, gil_forced = false, shared = false, supported = true;
  std::string libpython, prefix, compiler, build_flags, unsupported_reason;
  std::string mode;  // embed, exec
  std::optional<std::string> original_label;  // the label before `merge` tagged it
};
BuildRecord build_record(const Interpreter& interpreter);

// One value of a case's sweep; count: the value when it is an integer (a count a scaling view sweeps).
struct SweepValue {
  std::string key, text;
  std::optional<std::int64_t> count;
};

struct CaseInfo {
  std::string name, show;  // show: the key of a dict result the tables display
  std::string base_name;   // as written, before the sweep
  std::vector<SweepValue> sweep;
  // [case.extract]: metric name -> the regex its number was read with from stdout (by name).
  std::vector<std::pair<std::string, std::string>> extract;
  // The metric the case's ratios compare instead of wall time, and what it is in words ("" : wall).
  std::string compare{}, compare_what{};
};

// The experiment after profile and sweeps: `document` is all of it as the config wrote it (kept whole in
// the file); the fields beside it are what reports use.
struct ExperimentInfo {
  nlohmann::json document = nlohmann::json::object();
  std::string name, description, profile, baseline;
  std::optional<int> repeat;
  int warmup = 0;
  // The precision target: rounds are added until each cell's median is known to within this fraction
  // (the half-width of its 95 % interval over the median), or its time budget is spent. nullopt: a
  // fixed number of rounds (an older file, or `precision = 0`).
  std::optional<double> precision;
  nlohmann::json params = nlohmann::json::object();
  std::vector<std::pair<std::string, nlohmann::json>> article;  // what the article reported, per case
  std::vector<CaseInfo> cases;
  std::vector<ViewSpec> views;  // [[view]]
};

struct MetaRecord {
  int format = 0;
  std::string gilhost_version;
  std::int64_t started_unix_ns = 0;
  std::string config_file;
  std::optional<MachineRecord> machine;
  ExperimentInfo experiment;
  std::vector<BuildRecord> interpreters;
  // How quiet the machine was when the session started (measure/system_state: governor, turbo, ASLR,
  // load average, CPU MHz, isolated CPUs), kept whole as written; null in older files.
  nlohmann::json system;
  std::string cpus;                   // --cpus: every run pinned there ("" not pinned)
  bool appended_to_existing = false;  // -o named a file that already held sessions
  std::string session_id;             // 32 random hex digits made at session start; "" in older files
  std::string source;          // set by `merge`
  std::optional<int> session;  // set by `merge`
};

// A line of a results file, in file order.
using ResultsLine = std::variant<MetaRecord, RunRecord, SkipRecord>;

}  // namespace gilhost
