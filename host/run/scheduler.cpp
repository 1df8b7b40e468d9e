#include "run/scheduler.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "config/expect.hpp"
#include "util/clock.hpp"
#include "util/deferred_signals.hpp"
#include "util/fd.hpp"
#include "protocol/codec.hpp"
#include "results/extract_metrics.hpp"
#include "results/record_json.hpp"
#include "run/cell_stop.hpp"
#include "run/precision.hpp"
#include "run/stderr_file.hpp"
#include "runner/gil_offset_cache.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace gilhost {

std::vector<std::string> child_environment(const Experiment& ex, bool force_gil) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : ex.env) env[k] = v;
  if (force_gil) env["PYTHON_GIL"] = "1";
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

namespace {

// The run's event of one kind, decoded by run_child (protocol/event_log), or nullptr.
template <typename Event>
const Event* find_event(const std::optional<Event>& event) {
  return event ? &*event : nullptr;
}

// "2", "0.5", "1.25": a timeout as written, without std::to_string's trailing zeros.
std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The modules CPython's RuntimeWarning names as having turned the GIL back on, from the run's stderr.
std::vector<std::string> modules_in_gil_warnings(const std::string& stderr_text) {
  static const std::string kWarning = "The global interpreter lock (GIL) has been enabled to load module '";
  std::vector<std::string> names;
  for (std::size_t at = stderr_text.find(kWarning); at != std::string::npos; at = stderr_text.find(kWarning, at)) {
    at += kWarning.size();
    const std::size_t end = stderr_text.find('\'', at);
    if (end == std::string::npos) break;
    add_unique(names, stderr_text.substr(at, end - at));
  }
  return names;
}

// Which modules turned the GIL back on: what the runner saw flip it; when the GIL is on and the runner saw
// nothing (it flipped before the bootstrap ran, e.g. at start-up from a .pth file), the warning on stderr.
// Not forced, for a forced GIL was never off to be turned on.
std::vector<std::string> gil_reenabled_by(const protocol::Outcome& outcome, bool free_threaded, bool forced,
                                          const std::string& stderr_text) {
  std::vector<std::string> names = outcome.gil_reenabled_by;
  if (names.empty() && free_threaded && !forced && outcome.gil_enabled == true)
    names = modules_in_gil_warnings(stderr_text);
  return names;
}

// The case event's parts as the record's types.
std::optional<RunError> case_error(const std::optional<protocol::CaseError>& e) {
  if (!e) return std::nullopt;
  return RunError{e->type, e->qualname, e->message};
}

CaseCpu case_cpu(const protocol::CpuDelta& cpu) {
  CaseCpu c;
  c.user_ns = cpu.user_ns;
  c.sys_ns = cpu.sys_ns;
  c.children_user_ns = cpu.children_user_ns;
  c.children_sys_ns = cpu.children_sys_ns;
  c.cpu_ns = cpu.cpu_ns;
  c.voluntary_switches = cpu.voluntary_switches;
  c.involuntary_switches = cpu.involuntary_switches;
  return c;
}

std::string signal_name(int sig) {
  const char* d = ::strsignal(sig);
  return d ? std::string(d) : "signal " + std::to_string(sig);
}

// A fresh token for one run's events: what no script can copy from an earlier run's line.
std::string run_token() {
  unsigned char bytes[12] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    const auto t = static_cast<std::uint64_t>(monotonic_ns()) ^ (static_cast<std::uint64_t>(::getpid()) << 40);
    std::memcpy(bytes, &t, sizeof t);
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// Processes of the run's tree still alive after its process exited, which gilhost killed.
std::string leftover_note(int count) {
  return std::to_string(count) + (count == 1 ? " process of the run outlived it and was killed"
                                             : " processes of the run outlived it and were killed") +
         " (orphans the case left running: join or terminate them)";
}

// The interpreter's own "Fatal Python error: ..." line in the run's stderr (it could not start, or died
// in Py_FatalError), or "".
std::string fatal_python_error(const std::string& stderr_text) {
  const std::size_t at = stderr_text.find("Fatal Python error: ");
  if (at == std::string::npos) return "";
  return stderr_text.substr(at, stderr_text.find('\n', at) - at);
}

// Why a run that ran has no case event.
std::string missing_case_note(const ChildResult& child) {
  const std::string fd = std::to_string(child.event_fd);
  if (const std::string fatal = fatal_python_error(child.stderr_text); !fatal.empty())
    return "the interpreter failed: " + fatal + " (its stderr says more; PYTHONHOME or PYTHONPATH set wrong?)";
  if (child.events_closed_early)
    return "the event channel closed before the case was reported (did the script close fd " + fd + "?)" +
           (child.exit_code != 0 ? "; the process exited with status " + std::to_string(child.exit_code) : "");
  if (child.exit_code != 0)
    return "the process exited with status " + std::to_string(child.exit_code) +
           " before the case was reported (os._exit, an exit from a thread, or did the script close fd " + fd + "?)";
  return "the process exited before the case was reported (os._exit(0), or did the script close fd " + fd + "?)";
}

// What the runner's threads said of themselves as they ended (the case's outcome, or each subinterpreter's).
ThreadEnds thread_ends_of(const ChildResult& child) {
  ThreadEnds out;
  const protocol::CaseEvent* cs = find_event(child.events.case_event);
  if (!cs) return out;
  auto take = [&](const protocol::Outcome& o) {
    for (const auto& e : o.thread_ends)
      out.reports.push_back({static_cast<pid_t>(e.native_id), e.started_ns, e.ended_ns, e.cpu_ns});
    out.dropped += o.thread_ends_dropped;
  };
  take(cs->outcome);
  for (const auto& one : cs->per_interpreter) take(one.outcome);
  return out;
}

// What the runner said of its GILs, to tell the threads' waits apart.
struct GilsSaid {
  std::vector<GilReport> gils;
  std::string unlocated;  // why they were not located, when they were not
  std::vector<pid_t> helpers;
};

GilsSaid gils_said(const ChildResult& child, const std::string& mode) {
  GilsSaid out;
  out.unlocated = mode == "exec" ? "not located (exec mode: no runner to locate it)" : "not located (the runner did not say)";
  const auto main_gil = std::find_if(child.events.gils.begin(), child.events.gils.end(),
                                     [](const protocol::GilEvent& g) { return g.interpreter == 0; });
  if (main_gil != child.events.gils.end() && main_gil->has_gil && main_gil->futex_hi == 0)
    out.unlocated = "not located (" + main_gil->note + ")";
  else if (main_gil != child.events.gils.end())
    for (const auto& g : child.events.gils)
      if (!g.has_gil || g.futex_hi > g.futex_lo || g.interpreter < 0)
        out.gils.push_back({g.has_gil, g.futex_lo, g.futex_hi, g.interpreter, g.object, g.object_offset});
  for (const auto& g : child.events.gils)
    if (g.helper_tid > 0) out.helpers.push_back(static_cast<pid_t>(g.helper_tid));
  return out;
}

// The sampler's readings classified.
ThreadStates sampled_states(const ChildResult& child, const GilsSaid& said) {
  return classify_threads(child.threads, said.gils, said.unlocated, said.helpers, thread_ends_of(child));
}

// Where the run's threads spent their time: from the kernel's events where they were recorded, else
// from the sampler's readings.
std::optional<ThreadStates> thread_states_of(const ChildResult& child, const GilsSaid& said) {
  if (child.threads.empty() && !child.exact) return std::nullopt;
  if (child.exact) {
    const auto ns = [](const timeval& tv) { return std::int64_t{tv.tv_sec} * 1000000000 + std::int64_t{tv.tv_usec} * 1000; };
    return exact_thread_states(*child.exact, said.gils, said.unlocated, said.helpers,
                               ns(child.usage.ru_utime) + ns(child.usage.ru_stime));
  }
  return sampled_states(child, said);
}

// The sampler's states of a run whose exact ones were recorded too (--thread-states both).
std::optional<ThreadStates> sampled_beside_exact(const ChildResult& child, const GilsSaid& said) {
  if (!child.exact || child.threads.empty()) return std::nullopt;
  return sampled_states(child, said);
}

// Which run this was: the case, the build, the round.
RunRecord identify_run(const Experiment& ex, const PlannedRun& run) {
  const Case& c = *run.c;
  const Interpreter& in = *run.interp;
  RunRecord r;
  r.experiment = ex.name;
  r.case_name = c.name;
  r.base_case = c.base_name;
  r.params = c.params;
  r.sweep = c.sweep_values;
  r.interpreter = in.label;
  r.python = in.version_full;
  r.executable = in.executable;
  r.free_threaded = in.free_threaded;
  r.mode = c.subinterpreters > 0 ? "subinterpreters" : in.mode();
  r.subinterpreters = c.subinterpreters;
  r.gil = c.subinterpreters > 0 ? to_string(c.gil) : "";
  r.round = run.round;
  r.repeat = run.repeat;
  r.warmup = run.warmup;
  r.time_unix_ns = realtime_ns();
  return r;
}

// How the run ended, its error, and the note that says why.
struct RunVerdict {
  RunStatus status = RunStatus::ok;
  std::optional<RunError> error;
  std::string note;
};

// The note of a run whose event channel carried lines not the runner's, or lines it could not read;
// "" when it carried neither.
std::string event_channel_note(const ChildResult& child, bool case_reported) {
  const protocol::EventLog& ev = child.events;
  const std::string fd = std::to_string(child.event_fd);
  // Lines it could not read first: one of them may have swallowed the runner's own event (a script's
  // write without a newline), which makes the runner's later events look out of order.
  std::string note;
  if (ev.unreadable > 0)
    note = std::to_string(ev.unreadable) + " line" + (ev.unreadable > 1 ? "s" : "") + " on the event channel (fd " +
           fd + ") could not be read (the first: '" + ev.first_unreadable + "': " + ev.first_unreadable_why + ")" +
           (case_reported ? "" : ", and the case was never reported") + "; did the script write to it?";
  if (ev.foreign > 0)
    // Something besides the runner wrote well-formed events: what was kept is the runner's, but the run
    // is not one to trust.
    note += (note.empty() ? "" : " Also: ") + std::to_string(ev.foreign) + " event" + (ev.foreign > 1 ? "s" : "") +
            " on the event channel (fd " + fd + ") came from elsewhere and were refused (the first: " +
            ev.first_foreign + "): a process forked in the case that returned from it, or the script wrote to the channel" +
            (case_reported || ev.unreadable > 0 ? "" : "; the runner never reported the case");
  return note;
}

RunVerdict judge_run(const Experiment& ex, const ChildResult& child) {
  const protocol::CaseEvent* cs = find_event(child.events.case_event);
  const protocol::RunnerErrorEvent* rerr = find_event(child.events.runner_error);
  const protocol::Outcome outcome = cs ? cs->outcome : protocol::Outcome{};
  RunVerdict v;
  v.error = case_error(outcome.error);
  if (!child.spawn_error.empty()) {
    v.status = RunStatus::error;
    v.error = RunError{"GilhostSpawnError", "", child.spawn_error};
  } else if (child.timed_out) {
    v.status = RunStatus::timeout;
    v.note = "killed after the " + fmt_seconds(ex.timeout_s) + " s timeout" +
             (cs ? " (after the case returned: interpreter shutdown was waiting, e.g. for a non-daemon thread)" : "");
  } else if (child.interrupted) {
    v.status = RunStatus::interrupted;
  } else if (child.signal != 0) {
    v.status = RunStatus::crashed;
    v.note = "killed by " + signal_name(child.signal) + (cs ? " after the case" : "");
  } else if (rerr) {
    v.status = RunStatus::error;
    v.error = RunError{"GilhostRunnerError", "", std::string(protocol::to_string(rerr->stage)) + ": " + rerr->message};
  } else if (child.events.foreign > 0 || child.events.unreadable > 0) {
    v.status = RunStatus::error;
    v.note = event_channel_note(child, cs != nullptr);
  } else if (std::string why = protocol::clock_contradiction(child.events, child.spawned_at_ns, child.reaped_at_ns,
                                                             child.exited);
             !why.empty()) {
    v.status = RunStatus::error;  // the record is not the runner's measurement: its figures cannot stand
    v.note = why;
  } else if (!cs || child.exit_code != 0 || v.error) {
    // A run whose outcome never arrived is no measurement, whatever its exit status.
    v.status = RunStatus::error;
    if (!cs) v.note = missing_case_note(child);
  }
  if (cs && !cs->note.empty()) v.note += (v.note.empty() ? "" : "; ") + cs->note;
  if (child.leftover_processes > 0)
    v.note += (v.note.empty() ? "" : "; ") + leftover_note(child.leftover_processes);
  if (!child.exact_why_not.empty())  // exact asked for and allowed, yet not possible for this run
    v.note += std::string(v.note.empty() ? "" : "; ") + "thread states sampled, not exact: " + child.exact_why_not;
  return v;
}

// The times: the runner's own where it reported them, the parent's otherwise; CPU and memory.
void take_timings(RunRecord& r, const ChildResult& child) {
  const protocol::CaseEvent* cs = find_event(child.events.case_event);
  const protocol::FinalizedEvent* fin = find_event(child.events.finalized);
  r.wall_ns = cs ? cs->wall_ns : child.wall_ns();
  r.wall_from = cs ? "runner" : "parent";
  r.parent_wall_ns = child.wall_ns();
  r.init_ns = cs ? cs->init_ns.value_or(0) : 0;
  r.prepare_ns = cs ? cs->prepare_ns : 0;
  if (cs && cs->bootstrap_ns) {
    r.bootstrap_ns = *cs->bootstrap_ns;
    r.bootstrap_cached = cs->bootstrap_cached.value_or(false);
  }
  r.finalize_ns = fin ? fin->finalize_ns : 0;
  const protocol::ReadyEvent* ready = find_event(child.events.ready);
  if (ready && ready->main_at_ns > 0) {
    r.exec_ns = ready->main_at_ns - child.spawned_at_ns;
    r.load_ns = ready->load_ns;
  }
  if (fin && fin->at_ns > 0) r.exit_ns = child.reaped_at_ns - fin->at_ns;
  for (const auto& g : child.events.gils)
    if (g.interpreter == 0 && !g.after_case && g.locate_ns > 0) {
      r.locate_ns = g.locate_ns;
      r.locate_cached = g.from_cache;
    }
  if (cs) r.cpu = case_cpu(cs->cpu);
  const std::int64_t cpu_ns = r.cpu ? r.cpu->cpu_ns : 0;
  r.cpu_per_wall = r.wall_ns > 0 && cs ? static_cast<double>(cpu_ns) / static_cast<double>(r.wall_ns) : 0.0;
  r.tree_cpu_ns = timeval_ns(child.usage.ru_utime) + timeval_ns(child.usage.ru_stime);
  r.max_rss_kb = child.usage.ru_maxrss;
  r.rss = child.sampling;
}

// What the case returned and printed, and the GIL it ran under.
void take_outcome(RunRecord& r, const Interpreter& in, const ChildResult& child) {
  const protocol::CaseEvent* cs = find_event(child.events.case_event);
  const protocol::Outcome outcome = cs ? cs->outcome : protocol::Outcome{};
  if (r.thread_states) name_python_threads(*r.thread_states, outcome.thread_names, outcome.main_native_id);
  r.has_result = outcome.has_result;
  r.result = outcome.result;
  r.metrics = outcome.metrics;
  r.marks = outcome.marks;
  r.gil_enabled = outcome.gil_enabled;
  r.gil_enabled_before = outcome.gil_enabled_before;
  r.import_ns = outcome.import_ns;
  // Forced on by the selector (`+gil`), or by PYTHON_GIL=1 from elsewhere, which the runner reads back.
  r.gil_forced = in.gil_forced || outcome.gil_forced;
  r.gil_reenabled_by = gil_reenabled_by(outcome, in.free_threaded, r.gil_forced, child.stderr_text);
  r.threads_alive_at_end = outcome.threads_alive;
  if (cs && cs->mode == protocol::RunMode::subinterpreters) {
    std::vector<protocol::InterpreterOutcome> per = cs->per_interpreter;
    for (auto& one : per) one.outcome.thread_ends.clear();  // read into thread_states, not kept
    r.per_interpreter = per;
  }
  r.stdout_text = child.stdout_text;
  r.stderr_text = child.stderr_text;
  r.stdout_bytes = child.stdout_bytes;
  r.stderr_bytes = child.stderr_bytes;
  r.leftover_processes = child.leftover_processes;
}

// The case's expectations, checked against what the run gave.
void check_run_expectations(RunRecord& r, const Case& c, const Interpreter& in, const ChildResult& child) {
  RunFacts facts;
  facts.status = status_name(r.status);
  facts.exit_code = child.exit_code;
  facts.error_type = r.error ? r.error->type : "";
  facts.has_result = r.has_result;
  facts.result = r.result;
  facts.stdout_text = child.stdout_text;
  facts.stderr_text = child.stderr_text;
  facts.gil_forced = r.gil_forced;
  r.expect_ok = true;
  for (const auto& check : check_expectations(c, in.version, in.free_threaded, facts)) {
    r.expect_ok &= check.ok;
    r.expect.push_back({check.description, check.ok, check.detail});
  }
}

}  // namespace

// plan -> run -> record: one finished child as the record the results file and the report read.
RunRecord make_run_record(const Experiment& ex, const PlannedRun& run, const ChildResult& child) {
  RunRecord r = identify_run(ex, run);
  RunVerdict verdict = judge_run(ex, child);
  r.status = verdict.status;
  r.exit_code = child.exit_code;
  r.signal = child.signal;
  r.note = std::move(verdict.note);
  take_timings(r, child);
  const GilsSaid said = gils_said(child, r.mode);
  r.thread_states = thread_states_of(child, said);
  r.thread_states_sampled = sampled_beside_exact(child, said);
  take_outcome(r, *run.interp, child);
  r.error = std::move(verdict.error);
  apply_extracts(run.c->extract, r);  // [case.extract]: numbers the script printed, as metrics
  check_run_expectations(r, *run.c, *run.interp, child);
  return r;
}

namespace {

// The descriptors after the event pipe's: the watch pipe, whose closing at our death kills the run's process
// group, then the pipe that hands the runner its token (a token is never on argv).
int watch_fd_of(const SchedulerOptions& options) { return options.event_fd + 1; }
int token_fd_of(const SchedulerOptions& options) { return options.event_fd + 2; }

// The command line of every run of `run`'s cell: the same for each (the token goes through its pipe).
std::vector<std::string> cell_argv(const Experiment& ex, const PlannedRun& run, const SchedulerOptions& options) {
  RunnerSpec spec = runner_spec(*run.c, *run.interp);
  spec.bootstrap_cache_dir = options.bootstrap_cache_dir;
  spec.locate_gil = ex.thread_states;
  if (spec.locate_gil) spec.gil_offsets = handed_gil_offsets(spec.bootstrap_cache_dir, spec.libpython);
  return child_argv(spec, *run.interp, options.runner_path, options.event_fd, watch_fd_of(options),
                    token_fd_of(options));
}

// The child process for `run` (whose cell's command line is `argv`), as the session's options and the
// experiment say.
ChildRequest child_request(const Experiment& ex, const std::vector<std::string>& argv, const SchedulerOptions& options,
                           const std::vector<std::string>& env) {
  ChildRequest req;
  req.event_token = run_token();
  req.watch_fd = watch_fd_of(options);
  req.token_fd = token_fd_of(options);
  req.argv = argv;
  req.env = env;
  req.timeout_s = ex.timeout_s;
  req.sample_interval_ms = ex.sample_interval_ms;
  req.thread_states = ex.thread_states;
  req.exact_states = options.exact_states;
  req.sampled_beside_exact = options.sampled_beside_exact;
  req.event_fd = options.event_fd;
  req.interrupt = options.interrupt;
  return req;
}

// The machine's 1-minute load average now (/proc/loadavg), or nullopt where it cannot be read. Through a
// descriptor kept open: one pread a run, not an open, a read and a close (docs/performance.md).
std::optional<double> read_load_avg() {
  static const UniqueFd loadavg(::open("/proc/loadavg", O_RDONLY | O_CLOEXEC));
  char text[64];
  const ssize_t n = loadavg ? ::pread(loadavg.get(), text, sizeof text - 1, 0) : -1;
  if (n <= 0) return std::nullopt;
  text[n] = '\0';
  double one_minute = 0;  // from_chars: the C locale's '.', whatever setlocale said
  if (std::from_chars(text, text + n, one_minute).ec != std::errc()) return std::nullopt;
  return one_minute;
}

// `path` opened to be exec'd through (O_PATH), or none where it is not an executable file of ours now.
UniqueFd open_program(const std::string& path) {
  if (path.empty() || ::access(path.c_str(), X_OK) != 0) return UniqueFd();
  return UniqueFd(::open(path.c_str(), O_PATH | O_CLOEXEC));
}

std::string interrupted_reason(const ChildResult& child) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(child.wall_ns()) / 1e9);
  return std::string("interrupted (Ctrl-C) after ") + secs + " s; not measured";
}

}  // namespace

namespace {

// The session's steps, sharing what the session holds: each planned run spawned, watched, judged and
// counted; then its record written and its progress shown while the next run starts (`pending_`), so
// the orchestrator's work between two runs overlaps the next child's start-up instead of adding to it.
class SessionRun {
 public:
  SessionRun(const Experiment& ex, const SchedulerOptions& options, ResultsWriter& out, int total)
      : ex_(ex), options_(options), out_(out), env_(child_environment(ex, false)),
        gil_env_(child_environment(ex, true)), runner_(open_program(options.runner_path)), t0_(monotonic_ns()),
        stops_(options.cell_budget_s, options.repeat_failures, ex.precision_target()) {
    progress_.total = total;
    progress_.precision = ex.precision_target();
    progress_.min_rounds = ex.repeat;
  }
  void skip(SkipRecord rec);
  // Every run of `runs` in turn; false once the session is interrupted.
  bool run_all(const std::vector<PlannedRun>& runs);
  // Past the planned rounds, a round of the cells still short of the precision target (run/precision).
  void precision_rounds(const Plan& plan);
  SessionResult take() {
    settle();
    return std::move(session_);
  }

 private:
  bool run_one(const PlannedRun& run);
  ChildRequest request_for(const PlannedRun& run);
  double elapsed_s() const { return static_cast<double>(monotonic_ns() - t0_) / 1e9; }
  void show_start(const PlannedRun& run);
  // The record's last fields, its line in the results file, and its progress.
  void finish_record(std::size_t index, const PlannedRun& run, double started_s);
  void settle() {
    if (!pending_) return;
    std::function<void()> work = std::move(pending_);
    pending_ = nullptr;
    work();
    descriptors_.reset();
    held_.reset();
  }

  const Experiment& ex_;
  const SchedulerOptions& options_;
  ResultsWriter& out_;
  const std::vector<std::string> env_, gil_env_;
  const UniqueFd runner_;  // the runner as the session began (ChildRequest::exec_fd)
  const std::int64_t t0_;
  CellStops stops_;
  Progress progress_;
  SessionResult session_;
  std::map<std::pair<const Case*, const Interpreter*>, std::vector<std::string>> argv_of_cell_;
  std::function<void()> pending_;  // what is left of the run before: done once the next one is spawned
  std::shared_ptr<void> descriptors_;  // the run before's (ChildResult::descriptors): closed with pending_
  // Ctrl-C, SIGTERM and SIGHUP wait while a finished run's record is pending: gilhost ends as they ask,
  // but only once the results file holds every finished run.
  std::optional<DeferredSignals> held_;
};

void SessionRun::skip(SkipRecord rec) {
  settle();  // the results file keeps the order things happened in
  out_.append(rec);
  session_.skips.push_back(std::move(rec));
}

void SessionRun::show_start(const PlannedRun& run) {
  progress_.run = &run;
  progress_.record = nullptr;
  progress_.elapsed_s = elapsed_s();
  progress_.run_elapsed_s = 0;
  progress_.timeout_s = ex_.timeout_s;
  if (options_.on_start) options_.on_start(progress_);
}

ChildRequest SessionRun::request_for(const PlannedRun& run) {
  // The same for every run of a cell: made once (its spec's JSON is not built again between two runs).
  const std::pair<const Case*, const Interpreter*> cell{run.c, run.interp};
  auto argv = argv_of_cell_.find(cell);
  if (argv == argv_of_cell_.end()) argv = argv_of_cell_.emplace(cell, cell_argv(ex_, run, options_)).first;
  ChildRequest req = child_request(ex_, argv->second, options_, run.interp->gil_forced ? gil_env_ : env_);
  if (!req.argv.empty() && req.argv[0] == options_.runner_path) req.exec_fd = runner_.get();  // not exec mode's python
  if (options_.on_tick)
    req.on_tick = [this](double run_s) {
      progress_.run_elapsed_s = run_s;
      progress_.elapsed_s = elapsed_s();
      options_.on_tick(progress_);
    };
  // Once the child is spawned: the previous run's record and progress, then this run's progress line.
  req.after_spawn = [this, &run] {
    settle();
    show_start(run);
  };
  return req;
}

void SessionRun::finish_record(std::size_t index, const PlannedRun& run, double started_s) {
  RunRecord& record = session_.runs[index];
  record.load_avg = read_load_avg();
  if (!record.is_ok() && !record.stderr_text.empty() && !options_.stderr_dir.empty())
    record.stderr_file = write_stderr_file(options_.stderr_dir, record);
  out_.append(record);
  ++progress_.done;
  progress_.run = &run;
  progress_.record = &record;
  progress_.elapsed_s = elapsed_s();
  auto& [runs_of_cell, seconds_of_cell] = progress_.observed[{run.c, run.interp}];
  ++runs_of_cell;
  seconds_of_cell += progress_.elapsed_s - started_s;
  if (options_.on_finish) options_.on_finish(progress_);
}

bool SessionRun::run_one(const PlannedRun& run) {
  if (options_.interrupt && options_.interrupt->load()) {
    session_.interrupted = true;
    return false;
  }
  if (stops_.skip(run.c->name, run.interp->label, run.warmup)) {
    --progress_.total;
    return true;
  }
  // Showing the last run's output (--show-output) can take longer than the next run's start-up: not
  // while it starts.
  if (options_.on_finish) settle();
  const double started_s = elapsed_s();
  const ChildResult child = run_child(request_for(run));
  if (child.interrupted) {
    // A run cut short is not a measurement: kept out of the statistics, but listed as interrupted.
    session_.interrupted = true;
    skip(SkipRecord::of_case(ex_.name, run.c->name, run.interp->label, interrupted_reason(child)));
    return false;
  }
  session_.runs.push_back(make_run_record(ex_, run, child));
  // Counted now: whether this cell's next run is skipped depends on it.
  session_.runs.back().stopped = stops_.after(session_.runs.back(), ex_.repeat);
  // The PlannedRun is copied: a precision round's vector may be gone when this runs.
  held_.emplace(std::initializer_list<int>{SIGINT, SIGTERM, SIGHUP});
  pending_ = [this, index = session_.runs.size() - 1, run, started_s] { finish_record(index, run, started_s); };
  descriptors_ = child.descriptors;
  return true;
}

bool SessionRun::run_all(const std::vector<PlannedRun>& runs) {
  progress_.rest_end = runs.data() + runs.size();
  for (const PlannedRun& run : runs)
    if (!run_one(run)) return false;
  return true;
}

void SessionRun::precision_rounds(const Plan& plan) {
  for (int round = ex_.warmup + ex_.repeat;; ++round) {
    const std::vector<PlannedRun> more = precision_round(plan, stops_, round, ex_.warmup, ex_.repeat);
    if (more.empty()) return;
    progress_.total += static_cast<int>(more.size());
    const bool going = run_all(more);
    settle();  // before `more`, which the progress points into, is gone
    if (!going) return;
  }
}

}  // namespace

SessionResult run_session(const Experiment& ex, const Selection& selection, const Plan& plan,
                          const SchedulerOptions& options, ResultsWriter& out) {
  SessionRun session(ex, options, out, static_cast<int>(plan.runs.size()));
  for (const auto& s : selection.skipped)
    session.skip(SkipRecord::of_selector(ex.name, s.selector, s.label, s.reason));
  for (const auto& s : plan.skipped) session.skip(SkipRecord::of_case(ex.name, s.selector, s.label, s.reason));
  if (session.run_all(plan.runs)) session.precision_rounds(plan);
  return session.take();
}

}  // namespace gilhost
