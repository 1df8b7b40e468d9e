#pragma once
// What the runner tells gilhost about one run, as types: one struct per event of the runner↔host protocol.
//
// The runner (host/runner) and, in exec mode, the Python bootstrap write these as JSON lines on the event
// channel (fd 3, docs/architecture.md); gilhost reads each line into one of them once (protocol/codec,
// protocol/event_log) and nothing past that reads JSON keys. What a script returned or recorded (result,
// metric values) stays JSON, with NaN, infinities and integers beyond 64 bits as tagged values
// (util/tagged_number, docs/results-format.md): the protocol carries those values, it does not read them.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost::protocol {

// CPU time and context switches over the case: getrusage SELF + CHILDREN, after minus before.
struct CpuDelta {
  std::int64_t user_ns = 0;
  std::int64_t sys_ns = 0;
  std::int64_t children_user_ns = 0;
  std::int64_t children_sys_ns = 0;
  std::int64_t cpu_ns = 0;  // the four together
  std::int64_t voluntary_switches = 0;
  std::int64_t involuntary_switches = 0;
};

// The exception a case ended with.
struct CaseError {
  std::string type;      // type(exc).__name__
  std::string qualname;  // module.qualname
  std::string message;   // str(exc)
};

// gilhost.mark(label): the label and time.monotonic_ns() when it was called.
struct Mark {
  std::string label;
  std::int64_t ns = 0;
};

// What a Python thread said of itself as it ended (the bootstrap wraps threading's thread start): when its
// parent started it and when it ended (CLOCK_MONOTONIC), and its CPU time (CLOCK_THREAD_CPUTIME_ID, exact:
// the kernel brings it up to date as it is read). Not its time waiting for a core: that is only in /proc,
// and opening a thread's own /proc file made each short thread's life ~0.4 ms longer (measure/thread_classify).
struct ThreadEnd {
  std::int64_t native_id = 0;
  std::int64_t started_ns = 0, ended_ns = 0;
  std::int64_t cpu_ns = 0;
};

// What the bootstrap's _finish() says about a case (or, for subinterpreters, what the runner combines).
struct Outcome {
  bool has_result = false;
  nlohmann::json result;  // as the bootstrap wrote it: tagged numbers stay tagged
  std::optional<CaseError> error;
  std::int64_t exit_code = 0;  // SystemExit's code, 1 for an exception
  nlohmann::json metrics = nlohmann::json::object();  // name -> value, as written
  std::vector<Mark> marks;
  std::optional<bool> gil_enabled;         // at the end of the case; absent: nobody could say
  std::optional<bool> gil_enabled_before;  // before the script was imported or compiled
  // Of the prepare step, importing (call) or compiling (main) the script, its module-level code and its
  // setup; absent from an older runner. Subinterpreters: the longest of theirs.
  std::optional<std::int64_t> import_ns;
  bool gil_forced = false;                 // PYTHON_GIL=1 / -X gil=1 on a free-threaded build
  std::vector<std::string> gil_reenabled_by;  // modules seen turning the GIL back on
  std::optional<std::int64_t> threads_alive;  // threading.active_count() at the end
  std::string python_version;                 // "3.12.4"
  // Each Python thread seen (started in the case, or alive at its end): its native id (the kernel's tid)
  // and name. main_native_id: the thread that ran the case. Empty / absent from an older runner.
  std::vector<std::pair<std::int64_t, std::string>> thread_names;
  std::optional<std::int64_t> main_native_id;
  // Each threading.Thread that ended before the case's end, as it said (at most the bootstrap's cap, 50,000;
  // `thread_ends_dropped` counts the rest). Empty from an older runner, and in a run without threads.
  std::vector<ThreadEnd> thread_ends;
  std::int64_t thread_ends_dropped = 0;
};

// Where the case was bracketed: the runner around an embedded call, the bootstrap in an interpreter run
// as the child (exec), or the runner around its subinterpreters.
enum class RunMode { embed, exec, subinterpreters };

// One subinterpreter's own outcome, and when its case returned.
struct InterpreterOutcome {
  Outcome outcome;
  std::int64_t end_ns = 0;
};

// After initialisation: the runner is up.
struct ReadyEvent {
  std::int64_t pid = 0;
  std::int64_t init_ns = 0;
  // When the runner's main() began (CLOCK_MONOTONIC, one clock for every process of the machine, so the
  // host can subtract its spawn time: exec and the dynamic loader), and how long dlopen of libpython and
  // the lookup of its symbols took. 0: not said (an older runner).
  std::int64_t main_at_ns = 0;
  std::int64_t load_ns = 0;
};

// Where one interpreter's GIL lives in the runner's process (runner/gil_locator), said once per
// interpreter before the case: the futex words a thread waiting for that GIL sleeps on, [futex_lo,
// futex_hi). The host tells GIL waits from lock waits with it (measure/thread_states).
struct GilEvent {
  std::int64_t interpreter = 0;  // 0: the main interpreter; 1..N: the runner's subinterpreters
  bool has_gil = false;          // false: a thread that needed it never waited (free-threaded, GIL off)
  std::uint64_t futex_lo = 0, futex_hi = 0;
  std::string note;              // why it could not be located, when has_gil and no window
  std::int64_t helper_tid = 0;   // the runner's own thread that waited for it: none of the case's threads
  // The file (libpython, or the program Python is linked into) whose image holds the window, and the
  // window's offset from its load address: the same GIL in other processes that load that file (spawn
  // and forkserver workers' main interpreter). Empty: not in a file's image (a subinterpreter's own GIL).
  std::string object;
  std::uint64_t object_offset = 0;
  // Said after the case: a free-threaded build's GIL turned on during it (an extension without
  // Py_mod_gil), located then. It replaces an earlier report of no GIL for the same interpreter.
  bool after_case = false;
  // What locating took in the runner (ns), and whether the offset came from its per-build cache
  // (runner/gil_offset_cache: no helper thread then). Timing only: the host does not depend on them.
  std::int64_t locate_ns = 0;
  bool from_cache = false;
};

// The case, bracketed with CLOCK_MONOTONIC and getrusage, and its outcome.
struct CaseEvent {
  RunMode mode = RunMode::embed;
  std::int64_t start_ns = 0, end_ns = 0, wall_ns = 0;
  std::int64_t prepare_ns = 0;          // importing or compiling the script (embed, exec)
  std::optional<std::int64_t> init_ns;  // Python's initialisation (the runner's modes; not exec)
  std::optional<std::int64_t> bootstrap_ns;  // loading or compiling the bootstrap (the runner's modes)
  std::optional<bool> bootstrap_cached;      // ... from the cache file
  CpuDelta cpu;
  Outcome outcome;
  // The runner's main-interpreter case: the outcome as the bootstrap's _finish wrote it (JSON), sent in
  // place of `outcome` and decoded by gilhost alone (the runner decoded it in 21 us and encoded its case
  // event in 27, timed in a scratch build). Never set by decoding.
  std::string outcome_json;
  // subinterpreters only
  int subinterpreters = 0;
  std::string gil;  // "own" or "shared"
  std::vector<InterpreterOutcome> per_interpreter;
  std::string note;  // how the case ran where it differs from what was asked; empty: as asked
};

// After Py_FinalizeEx.
struct FinalizedEvent {
  std::int64_t finalize_ns = 0;
  std::int64_t max_rss_kb = 0;
  int status = 0;  // Py_FinalizeEx's return value
  // CLOCK_MONOTONIC as the event was sent: from here to the reap is the runner's exit (0: not said).
  std::int64_t at_ns = 0;
};

// Where the runner itself failed (it then exits with status 3).
enum class RunnerStage { spec, load, init, bootstrap };

struct RunnerErrorEvent {
  RunnerStage stage = RunnerStage::bootstrap;
  std::string message;
};

using Event = std::variant<ReadyEvent, GilEvent, CaseEvent, FinalizedEvent, RunnerErrorEvent>;

const char* to_string(RunMode mode);
const char* to_string(RunnerStage stage);

}  // namespace gilhost::protocol
