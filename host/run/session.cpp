#include "run/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "cli/python_check.hpp"
#include "config/adhoc.hpp"
#include "config/loader.hpp"
#include "config/precision.hpp"
#include "discover/selector.hpp"
#include "measure/exact_recorder.hpp"
#include "measure/machine.hpp"
#include "measure/system_state.hpp"
#include "report/fit.hpp"
#include "report/table.hpp"
#include "report/text.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "run/child.hpp"
#include "run/meta.hpp"
#include "run/plan.hpp"
#include "run/precision.hpp"
#include "run/progress.hpp"
#include "run/show_output.hpp"
#include "run/scheduler.hpp"
#include "util/paths.hpp"
#include "util/session_lock.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    // A second Ctrl-C ends gilhost at once, and the run in progress with it.
    kill_active_child_tree();
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

// SIGTERM, SIGHUP: die as asked, but leave no orphan; the results file already holds every finished run.
extern "C" void on_terminate(int sig) {
  kill_active_child_tree();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// What a waiting session is told about this one.
std::string session_description(const RunOptions& ro) {
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  const std::string what = ro.module.empty() ? join(ro.files, " ") : "-m " + ro.module;
  return "pid " + std::to_string(::getpid()) + ", gilhost run " + what + ", started " + when;
}

// --thread-states exact (or both) where the kernel allows it; else the sampler, and a note saying why.
bool exact_states_allowed(const RunOptions& ro, const Experiment& ex) {
  if ((ro.thread_states != "exact" && ro.thread_states != "both") || !ex.thread_states) return false;
  std::string why_not;
  if (ExactRecorder::available(why_not)) return true;
  std::cerr << "gilhost: thread states are sampled, not exact: " << why_not << "\n";
  return false;
}

std::string runner_path() {
  if (const char* env = std::getenv("GILHOST_RUNNER"); env && *env) return env;
  return companion_program("gilhost-runner");
}

Selection select_for(const std::vector<std::string>& selectors, ProbeCache& cache, const Discovery& discovery) {
  return select_interpreters(discovery.found, selectors, [&](const std::string& path, std::string& reason) {
    auto i = cache.probe(path, "explicit", reason);
    if (i) i->label = i->short_label() + " (" + path + ")";
    return i;
  });
}

// 2 when a -p selector selects no build (a typo must not cost a whole session), 0 otherwise. Discovery
// for -p skips builds whose path names another version; the message lists every usable build, so it
// looks again without skipping.
int check_python_selectors(const CommonOptions& co, ProbeCache& cache, const Discovery& discovery) {
  if (co.pythons.empty() || select_for(co.pythons, cache, discovery).unmatched.empty()) return 0;
  const Discovery all = discover_every(co, cache);
  std::cerr << "gilhost: no interpreter matches a -p selector, so nothing ran:\n";
  for (const auto& s : select_for(co.pythons, cache, all).unmatched) std::cerr << "  " << s.selector << ": " << s.reason << "\n";
  return 2;
}

// What can be said before anything runs: a call or setup that names no function (2, located as check
// says it, not once per run), and a module whose wall time does not track speed (a warning).
int check_before_running(const RunOptions& ro, const Experiment& ex, const std::vector<Interpreter>& builds) {
  if (!ro.module.empty())
    if (const std::string warning = own_loop_count_warning(ro.module); !warning.empty())
      std::cerr << "gilhost: warning: " << warning << "\n";
  try {
    if (const auto missing = check_function_names(ex, builds); !missing.empty()) {
      for (const auto& m : missing) std::cerr << m << "\n";
      return 2;
    }
  } catch (const std::runtime_error& e) {  // the checker itself failed: the runs will say what is wrong
    std::cerr << "gilhost: warning: could not check the functions named before running: " << e.what() << "\n";
  }
  return 0;
}

// "63 runs (3 cases x 7 interpreters x 3 rounds)"; with a precision target the count is open-ended:
// "63+ runs (3 cases x 7 interpreters x 3+ rounds, to ±5 %: ...)".
std::string plan_summary(const Experiment& ex, const Plan& plan, std::size_t builds) {
  const double target = ex.precision_target();
  const std::string more = target > 0 ? "+" : "";
  std::string out = std::to_string(plan.runs.size()) + more + " runs (" + std::to_string(ex.cases.size()) + " cases x " +
                    std::to_string(builds) + " interpreters x " + std::to_string(ex.warmup + ex.repeat) + more + " rounds";
  if (target > 0)
    out += ", to " + precision_text(target) + ": more rounds for each cell short of it, up to " +
           std::to_string(std::max(kMaxPrecisionRounds, ex.repeat)) + " runs" +
           (ex.cell_budget_s > 0 ? fmt::format(" or {:g} s", ex.cell_budget_s) : "") + " a cell";
  return out + ")";
}

// The experiment `file` names (or the script, or -m's module), with the command line's overrides; nullopt
// once its errors are said.
std::optional<Experiment> load_for_run(const std::string& file, const RunOptions& ro) {
  LoadOptions options;
  options.profile = ro.quick ? "quick" : ro.profile;
  options.case_globs = ro.case_globs;
  options.extracts = ro.extracts;
  Experiment ex;
  try {
    for (const auto& p : ro.params) {
      auto [key, value] = parse_param_override(p);
      options.params[key] = std::move(value);
    }
    if (!ro.module.empty()) ex = load_module_experiment(ro.module, ro.script_args, options);
    else if (is_python_script(file)) ex = load_script_experiment(file, ro.script_args, options);
    else ex = load_experiment(file, options);
  } catch (const ConfigErrors& e) {
    std::cerr << e.what() << "\n";
    return std::nullopt;
  } catch (const std::invalid_argument& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return std::nullopt;
  }
  if (ro.repeat > 0) {
    ex.repeat = ro.repeat;
    ex.repeat_written = true;
  }
  if (std::string unused; !ro.precision.empty()) ex.precision = parse_precision(ro.precision, unused);  // cmd_run checked it
  if (ro.warmup >= 0) ex.warmup = ro.warmup;
  if (ro.timeout > 0) ex.timeout_s = ro.timeout;
  if (ro.sample_interval_ms > 0) ex.sample_interval_ms = ro.sample_interval_ms;
  if (ro.max_cell_time >= 0) ex.cell_budget_s = ro.max_cell_time;
  if (ro.no_thread_states || ro.thread_states == "off") ex.thread_states = false;
  return ex;
}

// The builds to run on (-p, else the file's interpreters); nullopt once it is said why there are none.
std::optional<Selection> select_for_run(const Experiment& ex, const std::string& file, const RunOptions& ro,
                                        const CommonOptions& co, ProbeCache& cache, const Discovery& discovery) {
  const std::vector<std::string>& selectors = co.pythons.empty() ? ex.interpreters : co.pythons;
  Selection sel = select_for(selectors, cache, discovery);
  if (!co.pythons.empty() && !sel.unmatched.empty()) {  // a -p typo must not cost a whole session
    std::cerr << "gilhost: no interpreter matches a -p selector, so nothing ran:\n";
    for (const auto& s : sel.unmatched) std::cerr << "  " << s.selector << ": " << s.reason << "\n";
    return std::nullopt;
  }
  if (sel.selected.empty()) {
    std::cerr << "gilhost: no interpreter to run " << file << " on:\n";
    for (const auto& s : sel.skipped) std::cerr << "  " << s.selector << ": " << s.reason << "\n";
    return std::nullopt;
  }
  if (check_before_running(ro, ex, sel.selected) != 0) return std::nullopt;
  if (ro.force_exec)
    for (auto& i : sel.selected) i.shared = false;  // the interpreter itself is the child
  return sel;
}

void print_dry_run(const Experiment& ex, const Selection& sel, const Plan& plan) {
  std::cout << ex.name << ": " << plan_summary(ex, plan, sel.selected.size()) << "\n";
  for (const auto& r : plan.runs)
    if (r.round == 0) std::cout << "  " << r.c->name << " @ " << r.interp->label << " [" << r.interp->mode() << "]\n";
}

// How the scheduler runs the plan: the runner, the caches, the budget, the progress line on a terminal.
SchedulerOptions scheduler_options(const Experiment& ex, const RunOptions& ro, const CommonOptions& co,
                                   const std::string& path, bool tty) {
  SchedulerOptions so;
  so.runner_path = runner_path();
  // Where scripts/http_loops.py finds its C++ load client (a value the user set wins, like GILHOST_RUNNER).
  if (const fs::path load = fs::path(so.runner_path).parent_path() / "gilhost-load"; ::access(load.c_str(), X_OK) == 0)
    ::setenv("GILHOST_LOAD_CLIENT", load.c_str(), 0);
  if (!co.no_cache) so.bootstrap_cache_dir = (fs::path(cache_dir()) / "bootstrap").string();
  so.cell_budget_s = ex.cell_budget_s;
  so.repeat_failures = ro.repeat_failures;
  so.exact_states = exact_states_allowed(ro, ex);
  so.sampled_beside_exact = so.exact_states && ro.thread_states == "both";
  so.stderr_dir = path + ".stderr";
  so.interrupt = &g_interrupted;
  if (tty) so.on_start = so.on_tick = print_progress;
  if (ro.show_output)
    so.on_finish = [tty](const Progress& p) {
      if (tty) clear_progress();
      show_run_output(p);
    };
  return so;
}

// The session's report on stdout; the exit code: 130 interrupted, 1 an expectation failed, else 0.
int report_session(const std::string& path, const MetaRecord& meta, const SessionResult& session,
                   const std::string& file, const Selection& sel, const RunOptions& ro) {
  ReportOptions report_options;
  // On a terminal the grid and the answer; details when asked (a file gets them unless told not to).
  const bool tty_out = ::isatty(STDOUT_FILENO);
  report_options.details = ro.details || (!tty_out && !ro.no_details);
  report_options.profile_in_title = true;
  report_options.baseline_python = ro.baseline_python;
  // An ad-hoc script asks how the builds compare: against the first, unless told otherwise.
  const bool adhoc = !ro.module.empty() || is_python_script(file);
  if (report_options.baseline_python.empty() && adhoc && sel.selected.size() > 1)
    report_options.baseline_python = sel.selected[0].label;
  const ReportModel model = build_session_report(path, meta, session.skips, session.runs, report_options);
  std::cout << render_text(model, {ro.wide ? 0 : output_width(100), path}) << std::flush;
  if (session.interrupted) {
    std::cerr << "gilhost: interrupted; " << session.runs.size() << " finished runs kept in " << path
              << ", the interrupted one listed as interrupted\n";
    return 130;
  }
  return model.expectation_failures() > 0 ? 1 : 0;
}

// plan -> run -> record -> report, for one file.
int run_one(const std::string& file, const RunOptions& ro, const CommonOptions& co, ProbeCache& cache,
            const Discovery& discovery) {
  const std::optional<Experiment> loaded = load_for_run(file, ro);
  if (!loaded) return 2;
  const Experiment& ex = *loaded;
  const std::optional<Selection> selected = select_for_run(ex, file, ro, co, cache, discovery);
  if (!selected) return 2;
  const Selection& sel = *selected;
  if (const std::string why = plan_too_large(ex, sel.selected.size()); !why.empty()) {
    std::cerr << ex.path << ": " << why << "\n";
    return 2;
  }
  Plan plan = plan_runs(ex, sel.selected);
  if (ro.dry_run) {
    print_dry_run(ex, sel, plan);
    return 0;
  }
  // A default name is this session's alone; a file named with -o is appended to, and the meta says so.
  const std::string path = ro.output.empty() ? default_results_path(ex.name) : ro.output;
  std::error_code ec;
  const bool appending = !ro.output.empty() && fs::file_size(path, ec) > 0 && !ec;
  std::optional<ResultsWriter> opened;
  try {
    opened.emplace(path);  // refuses a file that is not a results file (an experiment, a script)
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  ResultsWriter& writer = *opened;
  if (appending) std::cerr << "gilhost: appending this session to " << path << ", which holds earlier ones\n";
  MetaRecord meta = make_meta(ex, sel.selected, file);
  meta.system = read_system_state().to_json();
  meta.cpus = ro.cpus;
  meta.appended_to_existing = appending;
  writer.append(meta);

  const bool tty = ::isatty(2);
  SessionResult session = run_session(ex, sel, plan, scheduler_options(ex, ro, co, path, tty), writer);
  if (tty) clear_progress();
  return report_session(path, meta, session, file, sel, ro);
}

}  // namespace

int cmd_run(const RunOptions& ro, const CommonOptions& co) {
  if (ro.quick && !ro.profile.empty()) {
    std::cerr << "gilhost: --quick is --profile quick; give one of them\n";
    return 2;
  }
  if (std::string why; !ro.precision.empty() && !parse_precision(ro.precision, why)) {
    std::cerr << "gilhost: --precision: " << why << "\n";
    return 2;
  }
  if (ro.module.empty() == ro.files.empty()) {
    std::cerr << (ro.files.empty() ? "gilhost: run what? Give experiment files, a script, or -m MODULE (see gilhost run --help)\n"
                                   : "gilhost: -m runs a module instead of files: give one or the other\n");
    return 2;
  }
  if (!ro.module.empty() && !is_module_name(ro.module)) {
    std::cerr << "gilhost: -m " << ro.module << ": not a module name (dotted, as python -m takes it: http.server)\n";
    return 2;
  }
  if (!ro.script_args.empty() && ro.module.empty() && !(ro.files.size() == 1 && is_python_script(ro.files[0]))) {
    std::cerr << "gilhost: arguments after -- are for a script or module (gilhost run script.py -- ARGS), not for experiment files\n";
    return 2;
  }
  if (!ro.cpus.empty()) {
    try {
      pin_to_cpus(parse_cpu_list(ro.cpus));
    } catch (const std::exception& e) {
      std::cerr << "gilhost: " << e.what() << "\n";
      return 2;
    }
  }
  ProbeCache cache(ProbeCache::default_path(), !co.no_cache);
  Discovery discovery = discover_all(co, cache);
  // A -p typo is said before waiting for another session's lock, not after.
  if (const int rc = check_python_selectors(co, cache, discovery); rc != 0) return rc;
  // One measuring session per machine; a dry run measures nothing and takes no lock.
  SessionLock lock;
  if (!ro.no_lock && !ro.dry_run) {
    lock = SessionLock::acquire(default_session_lock_path(), session_description(ro), [](const std::string& other) {
      std::cerr << "gilhost: waiting for the session measuring now to end: " << other << " (--no-lock measures anyway)\n";
    });
  }
  if (!ro.dry_run)
    for (const auto& warning : quiet_machine_warnings(read_system_state()))  // wrapped at spaces on a terminal
      std::cerr << wrap_text("gilhost: warning: " + warning, ::isatty(STDERR_FILENO) ? output_width(80) : 0) << "\n";
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_terminate);
  std::signal(SIGHUP, on_terminate);
  std::signal(SIGPIPE, SIG_IGN);
  become_subreaper();
  int worst = 0;
  // -m MODULE: one "file", named as the command line named it.
  const std::vector<std::string> targets = ro.module.empty() ? ro.files : std::vector<std::string>{"-m " + ro.module};
  for (const auto& f : targets) {
    int rc = run_one(f, ro, co, cache, discovery);
    worst = std::max(worst, rc);
    if (rc == 130) break;
  }
  cache.save();
  return worst;
}

}  // namespace gilhost
