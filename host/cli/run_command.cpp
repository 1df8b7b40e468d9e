// gilhost run: its options, and cmd_run (run/session) on them.
#include <string>
#include <utility>
#include <vector>

#include "cli/options.hpp"
#include "cli/subcommand.hpp"
#include "config/limits.hpp"
#include "run/session.hpp"

namespace gilhost {
namespace {

class RunCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  RunOptions ro;
  CommonOptions co;

  int execute() override { return cmd_run(ro, co); }
  bool takes_trailing_args() const override { return true; }
  void set_trailing_args(std::vector<std::string> args) override { ro.script_args = std::move(args); }
};

// What to run, on which builds, how often.
void add_run_selection(CLI::App& run, RunOptions& ro, CommonOptions& co) {
  run.add_option("files", ro.files,
                 "Experiment TOML files (configs/*.toml), or one Python script run as __main__ (arguments for it after --)")
      ->check(CLI::ExistingFile);
  run.add_option("-m,--module", ro.module, "Run a module as __main__, as python -m does (arguments for it after --)")
      ->type_name("MODULE");
  run.add_option("-p,--python", co.pythons, "Interpreter selector: all, ft, gil, 3.12, 3.12.1, 3.13t, \">=3.11\", or a path (repeatable; overrides the file); "
                 "add +gil (3.14t+gil, ft+gil) to run free-threaded builds with their GIL forced on, as a column of their own");
  run.add_option("--profile", ro.profile, "Apply a [profile.NAME] of the file");
  run.add_flag("-q,--quick", ro.quick, "Same as --profile quick");
  run.add_option("-o,--output", ro.output, "Results file (JSON Lines; default results/NAME-TIMESTAMP-PID.jsonl, this session's own); a file named here that holds sessions already is appended to, and the new meta line says so");
  run.add_option("--sample-interval", ro.sample_interval_ms, "Milliseconds between the sampler's readings of RSS, CPU and thread states (overrides the file's sample_interval_ms; default 10)")
      ->check(whole_number_at_least(1, limits::kMaxSampleIntervalMs))
      ->type_name("MS");
  run.add_option("--repeat", ro.repeat, "Measured runs per case and interpreter (overrides the file)")->check(whole_number_at_least(1, limits::kMaxRounds));
  run.add_option("--warmup", ro.warmup, "Warm-up runs, dropped from statistics (overrides the file)")
      ->check(whole_number_at_least(0, limits::kMaxRounds));
  run.add_option("--timeout", ro.timeout, "Seconds per run before its process tree is killed (default: the file's, 300 s if it says none)")->check(seconds_above_zero());
}

// What the terminal shows, and how long a cell may take.
void add_run_output(CLI::App& run, RunOptions& ro) {
  run.add_flag("--show-output", ro.show_output, "Print each run's output when it ends, labelled by case and build (its stdout to stdout)");
  run.add_option("--baseline-python", ro.baseline_python, "Compare every build with this one: a 'vs SEL' table of wall / wall (a script's run compares with the first build)");
  run.add_flag("--details", ro.details, "Also print the per-cell details on a terminal (always in the results file and reports)");
  run.add_flag("--no-details", ro.no_details, "Print no per-cell details (the default on a terminal)");
  run.add_flag("--wide", ro.wide, "Tables unabridged (by default they fit the terminal, or 100 columns in a file)");
  run.add_option("--max-cell-time", ro.max_cell_time, "Stop repeating a case on a build once its runs (warm-ups too) "
                 "took SECONDS in all; at least one measured run is kept (default 20, the file's cell_budget; 0: no budget)")
      ->check(CLI::NonNegativeNumber);
  run.add_option("--precision", ro.precision, "Add rounds until each case's median on each build is known to within this (3%, 0.03; off: exactly --repeat rounds; default 5% unless the file or --repeat sets a count)")->type_name("PCT");
  run.add_flag("--repeat-failures", ro.repeat_failures, "Repeat a case that failed in every run of its first round");
  run.add_flag("-n,--dry-run", ro.dry_run, "Show the runs that would be made, run nothing");
  run.add_flag("--no-thread-states", ro.no_thread_states,
               "Do not sample each thread's state (on CPU, waiting for a core, the GIL, a lock, I/O, sleep)");
  run.add_option("--thread-states", ro.thread_states,
                 "How each thread's state is taken: sampled (the default: /proc every few ticks), exact (every switch "
                 "and blocking system call, from the kernel's perf events; where they are not allowed, sampled with a "
                 "note), both (exact, and sampled beside it on the same runs: thread_states_sampled, to compare), off")
      ->check(CLI::IsMember({"exact", "sampled", "both", "off"}))
      ->type_name("MODE");
  run.add_flag("--exec", ro.force_exec, "Run each interpreter itself as the child (exec mode: no in-process features)");
}

// Which cases and params, what to extract, and the machine.
void add_run_cases(CLI::App& run, RunOptions& ro, CommonOptions& co) {
  run.add_option("--case", ro.case_globs, "Run only the cases whose name matches GLOB (threads*, *workers=2*; repeatable)")
      ->type_name("GLOB");
  run.add_option("--param", ro.params, "Override a param: KEY=VALUE, typed as in TOML (n=5, mode=threads; repeatable)")
      ->type_name("KEY=VALUE");
  run.add_option("--extract", ro.extracts,
                 "Make a metric of a number the script prints: NAME=REGEX, one (group) around the number, tried on each "
                 "line of stdout, the first match counts (speedup='([0-9.]+)x faster'; repeatable; over the file's "
                 "[case.extract])")
      ->type_name("NAME=REGEX");
  run.add_flag("--no-lock", ro.no_lock, "Measure even while another gilhost session measures (by default it waits its turn)");
  run.add_option("--cpus", ro.cpus, "Pin every run to these CPUs (0-3,6: sched_setaffinity; recorded)")->type_name("LIST");
  run.footer("A Python script instead of an experiment file is measured as __main__ with the usual repeat, warm-up,\n"
             "timeout, table and results file: gilhost run bench.py -p 3.13 -p 3.14t -- --size 100\n"
             "and so is a module, found from the working directory as python -m finds it: gilhost run -m timeit -- 'sum(range(99))'\n"
             "Numbers a script prints become metrics with [case.extract] in the file (name = 'regex', one group\n"
             "around the number) or --extract NAME=REGEX; reports and compare show them beside the wall times.\n"
             "One gilhost run measures at a time on a machine (a lock in the cache folder); it warns when the load\n"
             "average says other work shares the cores, and records the machine's state (governor, turbo, ASLR, load) in the results.");
  run.add_flag("--no-cache", co.no_cache,
               "Probe interpreters again and compile the runner's bootstrap every run, instead of using the caches");
}

}  // namespace

std::unique_ptr<Subcommand> add_run_command(CLI::App& app) {
  auto c = std::make_unique<RunCommand>(
      app.add_subcommand("run", "Run experiment files (or a script) and print the table of cases x interpreters"));
  add_run_selection(c->app(), c->ro, c->co);
  add_run_output(c->app(), c->ro);
  add_run_cases(c->app(), c->ro, c->co);
  return c;
}

}  // namespace gilhost
