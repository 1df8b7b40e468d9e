#include "run/scheduler.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>

#include "config/expect.hpp"
#include "measure/clock.hpp"
#include "results/record_json.hpp"
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

const nlohmann::json* find_event(const ChildResult& child, const char* name) {
  for (const auto& e : child.events)
    if (e.value("event", "") == name) return &e;
  return nullptr;
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
std::vector<std::string> gil_reenabled_by(const nlohmann::json& outcome, bool free_threaded, bool forced,
                                          const std::string& stderr_text) {
  std::vector<std::string> names;
  const nlohmann::json seen = outcome.value("gil_reenabled_by", nlohmann::json::array());
  if (seen.is_array())
    for (const auto& name : seen)
      if (name.is_string()) names.push_back(name.get<std::string>());
  if (names.empty() && free_threaded && !forced && outcome.value("gil_enabled", nlohmann::json()) == true)
    names = modules_in_gil_warnings(stderr_text);
  return names;
}

// The case event's objects as the record's types.
std::optional<RunError> case_error(const nlohmann::json& e) {
  if (!e.is_object()) return std::nullopt;
  return RunError{e.value("type", ""), e.value("qualname", ""), e.value("message", "")};
}

CaseCpu case_cpu(const nlohmann::json& cpu) {
  CaseCpu c;
  c.user_ns = cpu.value("user_ns", std::int64_t{0});
  c.sys_ns = cpu.value("sys_ns", std::int64_t{0});
  c.children_user_ns = cpu.value("children_user_ns", std::int64_t{0});
  c.children_sys_ns = cpu.value("children_sys_ns", std::int64_t{0});
  c.cpu_ns = cpu.value("cpu_ns", std::int64_t{0});
  c.voluntary_switches = cpu.value("voluntary_switches", std::int64_t{0});
  c.involuntary_switches = cpu.value("involuntary_switches", std::int64_t{0});
  return c;
}

std::optional<bool> optional_flag(const nlohmann::json& v) {
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}

std::string signal_name(int sig) {
  const char* d = ::strsignal(sig);
  return d ? std::string(d) : "signal " + std::to_string(sig);
}

// Why a run that ran has no case event.
std::string missing_case_note(const ChildResult& child) {
  const std::string fd = std::to_string(child.event_fd);
  if (child.events_closed_early)
    return "the event channel closed before the case was reported (did the script close fd " + fd + "?)" +
           (child.exit_code != 0 ? "; the process exited with status " + std::to_string(child.exit_code) : "");
  if (child.exit_code != 0)
    return "the process exited with status " + std::to_string(child.exit_code) +
           " before the case was reported (os._exit, an exit from a thread, or did the script close fd " + fd + "?)";
  return "the process exited before the case was reported (os._exit(0), or did the script close fd " + fd + "?)";
}

}  // namespace

RunRecord make_run_record(const Experiment& ex, const PlannedRun& run, const ChildResult& child) {
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
  r.gil = c.subinterpreters > 0 ? c.gil : "";
  r.round = run.round;
  r.repeat = run.repeat;
  r.warmup = run.warmup;
  r.time_unix_ns = realtime_ns();

  const nlohmann::json* cs = find_event(child, "case");
  const nlohmann::json* fin = find_event(child, "finalized");
  const nlohmann::json* rerr = find_event(child, "error");
  nlohmann::json outcome = cs ? cs->value("outcome", nlohmann::json::object()) : nlohmann::json::object();

  std::optional<RunError> error = case_error(outcome.value("error", nlohmann::json()));
  std::string note;
  if (!child.spawn_error.empty()) {
    r.status = RunStatus::error;
    error = RunError{"GilhostSpawnError", "", child.spawn_error};
  } else if (child.timed_out) {
    r.status = RunStatus::timeout;
    note = "killed after the " + fmt_seconds(ex.timeout_s) + " s timeout" +
           (cs ? " (after the case returned: interpreter shutdown was waiting, e.g. for a non-daemon thread)" : "");
  } else if (child.interrupted) {
    r.status = RunStatus::interrupted;
  } else if (child.signal != 0) {
    r.status = RunStatus::crashed;
    note = "killed by " + signal_name(child.signal) + (cs ? " after the case" : "");
  } else if (rerr) {
    r.status = RunStatus::error;
    error = RunError{"GilhostRunnerError", "", rerr->value("stage", "") + ": " + rerr->value("message", "")};
  } else if (child.unreadable_events > 0) {
    r.status = RunStatus::error;
    note = std::to_string(child.unreadable_events) + " line" + (child.unreadable_events > 1 ? "s" : "") +
           " on the event channel (fd " + std::to_string(child.event_fd) + ") could not be read (the first: '" +
           child.first_unreadable_event + "')" + (cs ? "" : ", and the case was never reported") +
           "; did the script write to it?";
  } else if (!cs || child.exit_code != 0 || error) {
    // A run whose outcome never arrived is no measurement, whatever its exit status.
    r.status = RunStatus::error;
    if (!cs) note = missing_case_note(child);
  } else {
    r.status = RunStatus::ok;
  }

  if (cs && cs->contains("note") && (*cs)["note"].is_string()) note += (note.empty() ? "" : "; ") + (*cs)["note"].get<std::string>();

  r.wall_ns = cs ? cs->value("wall_ns", std::int64_t{0}) : child.wall_ns;
  const nlohmann::json cpu = cs ? cs->value("cpu", nlohmann::json::object()) : nlohmann::json::object();
  r.exit_code = child.exit_code;
  r.signal = child.signal;
  r.note = note;
  r.wall_from = cs ? "runner" : "parent";
  r.parent_wall_ns = child.wall_ns;
  r.init_ns = cs ? cs->value("init_ns", std::int64_t{0}) : 0;
  r.prepare_ns = cs ? cs->value("prepare_ns", std::int64_t{0}) : 0;
  if (cs && cs->contains("bootstrap_ns")) {
    r.bootstrap_ns = cs->value("bootstrap_ns", std::int64_t{0});
    r.bootstrap_cached = cs->value("bootstrap_cached", false);
  }
  r.finalize_ns = fin ? fin->value("finalize_ns", std::int64_t{0}) : 0;
  if (cpu.is_object() && !cpu.empty()) r.cpu = case_cpu(cpu);
  const std::int64_t cpu_ns = r.cpu ? r.cpu->cpu_ns : 0;
  r.cpu_per_wall = r.wall_ns > 0 && cs ? static_cast<double>(cpu_ns) / static_cast<double>(r.wall_ns) : 0.0;
  r.tree_cpu_ns = timeval_ns(child.usage.ru_utime) + timeval_ns(child.usage.ru_stime);
  r.max_rss_kb = child.usage.ru_maxrss;
  if (child.sampling.is_object()) r.rss = tree_summary_from_json(child.sampling);
  r.has_result = outcome.value("has_result", false);
  r.result = outcome.value("result", nlohmann::json());
  r.error = error;
  r.metrics = outcome.value("metrics", nlohmann::json::object());
  r.marks = outcome.value("marks", nlohmann::json::array());
  r.gil_enabled = optional_flag(outcome.value("gil_enabled", nlohmann::json()));
  r.gil_enabled_before = optional_flag(outcome.value("gil_enabled_before", nlohmann::json()));
  // Forced on by the selector (`+gil`), or by PYTHON_GIL=1 from elsewhere, which the runner reads back.
  r.gil_forced = in.gil_forced || outcome.value("gil_forced", false);
  r.gil_reenabled_by = gil_reenabled_by(outcome, in.free_threaded, r.gil_forced, child.stderr_text);
  const nlohmann::json threads = outcome.value("threads_alive", nlohmann::json());
  if (threads.is_number_integer()) r.threads_alive_at_end = threads.get<std::int64_t>();
  if (cs && cs->contains("per_interpreter")) r.per_interpreter = (*cs)["per_interpreter"];
  r.stdout_text = child.stdout_text;
  r.stderr_text = child.stderr_text;
  r.stdout_bytes = child.stdout_bytes;
  r.stderr_bytes = child.stderr_bytes;
  r.leftover_processes = child.leftover_processes;

  RunFacts facts;
  facts.status = status_name(r.status);
  facts.exit_code = child.exit_code;
  facts.error_type = error ? error->type : "";
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
  return r;
}

SessionResult run_session(const Experiment& ex, const Selection& selection, const Plan& plan,
                          const SchedulerOptions& options, ResultsWriter& out) {
  SessionResult session;
  auto skip = [&](SkipRecord rec) {
    out.append(rec);
    session.skips.push_back(std::move(rec));
  };
  for (const auto& s : selection.skipped) skip(SkipRecord::of_selector(ex.name, s.selector, s.label, s.reason));
  for (const auto& s : plan.skipped) skip(SkipRecord::of_case(ex.name, s.selector, s.label, s.reason));
  const std::vector<std::string> env = child_environment(ex, false), gil_env = child_environment(ex, true);
  const std::int64_t t0 = monotonic_ns();
  Progress progress;
  progress.total = static_cast<int>(plan.runs.size());
  for (const auto& run : plan.runs) {
    if (options.interrupt && options.interrupt->load()) {
      session.interrupted = true;
      break;
    }
    progress.run = &run;
    progress.record = nullptr;
    progress.elapsed_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
    if (options.on_start) options.on_start(progress);

    ChildRequest req;
    RunnerSpec spec = runner_spec(*run.c, *run.interp);
    spec.bootstrap_cache_dir = options.bootstrap_cache_dir;
    // The descriptor after the event pipe's: its closing at our death kills the run's process group.
    req.watch_fd = options.event_fd + 1;
    req.argv = child_argv(spec, *run.interp, options.runner_path, options.event_fd, req.watch_fd);
    req.env = run.interp->gil_forced ? gil_env : env;
    req.timeout_s = ex.timeout_s;
    req.sample_interval_ms = ex.sample_interval_ms;
    req.event_fd = options.event_fd;
    req.echo_output = options.echo_output;
    req.interrupt = options.interrupt;
    ChildResult child = run_child(req);
    if (child.interrupted) {
      session.interrupted = true;  // a run cut short is not a measurement: keep it out of the file
      break;
    }
    session.runs.push_back(make_run_record(ex, run, child));
    out.append(session.runs.back());
    ++progress.done;
    progress.record = &session.runs.back();
    progress.elapsed_s = static_cast<double>(monotonic_ns() - t0) / 1e9;
    if (options.on_finish) options.on_finish(progress);
  }
  return session;
}

}  // namespace gilhost
