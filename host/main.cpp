// gilhost: measure Python's concurrency models across every Python build found.
// CLI only: parse the command line, hand each subcommand to the module that does the work, exit with its code.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <exception>
#include <iostream>
#include <new>
#include <optional>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/did_you_mean.hpp"
#include "cli/plain_text.hpp"
#include "config/limits.hpp"
#include "run/session.hpp"
#include "util/gilhost_version.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;
using namespace gilhost;

namespace {

// CLI11's own range checks print the whole range of a double; these say what is wanted.
CLI::Validator whole_number_at_least(long min, long max = 1000000000) {
  return CLI::Validator(
      [min, max](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || n < min || n > max)
          return "'" + v + "' is not a whole number of at least " + std::to_string(min) + " (and at most " +
                 std::to_string(max) + ")";
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator seconds_above_zero() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(d > 0) || !(d <= limits::kMaxTimeoutS))
          return "'" + v + "' is not a number of seconds above 0 and at most a week";
        return {};
      },
      "SECONDS>0");
}

// Allocation failure anywhere (a thread, a destructor, a noexcept function included) ends gilhost with
// this, never an abort on an uncaught std::bad_alloc.
[[noreturn]] void out_of_memory() {
  static const char message[] =
      "gilhost: out of memory (a ulimit, or an experiment too large for this machine: docs/config.md, Limits)\n";
  (void)!::write(2, message, sizeof message - 1);
  std::_Exit(2);
}

[[noreturn]] void on_terminate() {
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      out_of_memory();
    } catch (...) {
    }
  }
  std::abort();
}

// " (did you mean '--quick'?)" for an option the command does not have, from CLI11's leftovers.
std::string option_hint(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : sub->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& n : opt->get_snames()) names.push_back("-" + n);
    }
    for (const auto& extra : sub->remaining())
      if (extra.rfind("-", 0) == 0)
        if (const std::string near = nearest_word(extra.substr(0, extra.find('=')), names); !near.empty())
          return "did you mean '" + near + "' (not '" + extra + "')?";
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  CLI::App app{"gilhost — measure how Python's concurrency models behave, on every Python build found.\n"
               "Each run is a fresh child process that loads that build's libpython; the host times it from outside."};
  app.name("gilhost");
  app.set_version_flag("--version", GILHOST_VERSION);
  app.require_subcommand(1);

  CommonOptions co;
  RunOptions ro;
  bool as_json = false;

  auto* run = app.add_subcommand("run", "Run experiment files (or a script) and print the table of cases x interpreters");
  run->add_option("files", ro.files,
                  "Experiment TOML files (configs/*.toml), or one Python script run as __main__ (arguments for it after --)")
      ->check(CLI::ExistingFile);
  run->add_option("-m,--module", ro.module, "Run a module as __main__, as python -m does (arguments for it after --)")
      ->type_name("MODULE");
  run->add_option("-p,--python", co.pythons, "Interpreter selector: all, ft, gil, 3.12, 3.12.1, 3.13t, \">=3.11\", or a path (repeatable; overrides the file); "
                  "add +gil (3.14t+gil, ft+gil) to run free-threaded builds with their GIL forced on, as a column of their own");
  run->add_option("--profile", ro.profile, "Apply a [profile.NAME] of the file");
  run->add_flag("-q,--quick", ro.quick, "Same as --profile quick");
  run->add_option("-o,--output", ro.output, "Results file (JSON Lines; default results/NAME-TIMESTAMP-PID.jsonl, this session's own); a file named here that holds sessions already is appended to, and the new meta line says so");
  run->add_option("--repeat", ro.repeat, "Measured runs per case and interpreter (overrides the file)")->check(whole_number_at_least(1, limits::kMaxRounds));
  run->add_option("--warmup", ro.warmup, "Warm-up runs, dropped from statistics (overrides the file)")
      ->check(whole_number_at_least(0, limits::kMaxRounds));
  run->add_option("--timeout", ro.timeout, "Seconds per run before its process tree is killed (default: the file's, 300 s if it says none)")->check(seconds_above_zero());
  run->add_flag("--show-output", ro.show_output, "Print each run's output when it ends, labelled by case and build (its stdout to stdout)");
  run->add_option("--baseline-python", ro.baseline_python, "Compare every build with this one: a 'vs SEL' table of wall / wall (a script's run compares with the first build)");
  run->add_flag("--details", ro.details, "Also print the per-cell details on a terminal (always in the results file and reports)");
  run->add_flag("--no-details", ro.no_details, "Print no per-cell details (the default on a terminal)");
  run->add_flag("--wide", ro.wide, "Tables unabridged (by default they fit the terminal, or 100 columns in a file)");
  run->add_option("--max-cell-time", ro.max_cell_time, "Stop repeating a case on a build once its runs (warm-ups too) "
                  "took SECONDS in all; at least one measured run is kept (default 20, the file's cell_budget; 0: no budget)")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--repeat-failures", ro.repeat_failures, "Repeat a case that failed in every run of its first round");
  run->add_flag("-n,--dry-run", ro.dry_run, "Show the runs that would be made, run nothing");
  run->add_flag("--no-thread-states", ro.no_thread_states,
                "Do not sample each thread's state (on CPU, waiting for a core, the GIL, a lock, I/O, sleep)");
  run->add_option("--thread-states", ro.thread_states,
                  "How each thread's state is taken: sampled (the default: /proc every few ticks), exact (every switch "
                  "and blocking system call, from the kernel's perf events; where they are not allowed, sampled with a "
                  "note), off")
      ->check(CLI::IsMember({"exact", "sampled", "off"}))
      ->type_name("MODE");
  run->add_flag("--exec", ro.force_exec, "Run each interpreter itself as the child (exec mode: no in-process features)");
  run->add_option("--case", ro.case_globs, "Run only the cases whose name matches GLOB (threads*, *workers=2*; repeatable)")
      ->type_name("GLOB");
  run->add_option("--param", ro.params, "Override a param: KEY=VALUE, typed as in TOML (n=5, mode=threads; repeatable)")
      ->type_name("KEY=VALUE");
  run->add_option("--extract", ro.extracts,
                  "Make a metric of a number the script prints: NAME=REGEX, one (group) around the number, tried on each "
                  "line of stdout, the first match counts (speedup='([0-9.]+)x faster'; repeatable; over the file's "
                  "[case.extract])")
      ->type_name("NAME=REGEX");
  run->add_flag("--no-lock", ro.no_lock, "Measure even while another gilhost session measures (by default it waits its turn)");
  run->add_option("--cpus", ro.cpus, "Pin every run to these CPUs (0-3,6: sched_setaffinity; recorded)")->type_name("LIST");
  run->footer("A Python script instead of an experiment file is measured as __main__ with the usual repeat, warm-up,\n"
              "timeout, table and results file: gilhost run bench.py -p 3.13 -p 3.14t -- --size 100\n"
              "and so is a module, found from the working directory as python -m finds it: gilhost run -m timeit -- 'sum(range(99))'\n"
              "Numbers a script prints become metrics with [case.extract] in the file (name = 'regex', one group\n"
              "around the number) or --extract NAME=REGEX; reports and compare show them beside the wall times.\n"
              "One gilhost run measures at a time on a machine (a lock in the cache folder); it warns when the load\n"
              "average says other work shares the cores, and records the machine's state (governor, turbo, ASLR, load) in the results.");
  run->add_flag("--no-cache", co.no_cache,
                "Probe interpreters again and compile the runner's bootstrap every run, instead of using the caches");

  auto* check = app.add_subcommand("check", "Validate experiment files (errors as file:line:column)");
  std::vector<std::string> check_files;
  check->add_option("files", check_files, "Experiment TOML files")->required();
  check->add_option("-p,--python", co.pythons, "Check the scripts on these builds (selectors as for run; default: the file's interpreters)");
  check->add_flag("--no-cache", co.no_cache, "Probe interpreters again instead of using the cache");

  auto* pythons = app.add_subcommand("pythons", "List the Python builds found (PATH, pyenv, uv, gilhost build, $GILHOST_PYTHONS)");
  pythons->add_option("-p,--python", co.pythons, "Also probe this path, and show what these selectors pick");
  pythons->add_flag("--json", as_json, "Print JSON");
  pythons->add_flag("--no-cache", co.no_cache, "Probe again instead of using the cache");

  auto* report = app.add_subcommand("report", "Render results files: the table, or Markdown, HTML, JSON, CSV or a thread trace");
  ReportOptionsCli rep;
  report->add_option("results", rep.files, "Results files (.jsonl); several are merged (see merge) into one report")
      ->required()->check(CLI::ExistingFile);
  report->add_option("-f,--format", rep.format,
                     "text (default), md, html (one self-contained page), json (summary cells), csv (one row per run), "
                     "trace (the runs' thread timelines as Chrome Trace Event JSON, for Perfetto UI or chrome://tracing)")
      ->check(CLI::IsMember({"text", "md", "html", "json", "csv", "trace"}));
  report->add_option("-o,--output", rep.output, "Write to this file (atomically) instead of stdout");
  report->add_option("--baseline-python", rep.baseline_python, "Add a column 'vs SEL' per cell: wall / wall of this build (3.12, 3.13t, a label), paired by repeat");
  report->add_flag("--no-details", rep.no_details, "Only the grid, not the per-cell details");
  report->add_flag("--wide", rep.wide, "Tables unabridged (by default a terminal's report fits its width)");
  report->add_option("--session", rep.session, "Only this session of a file -o appended several to (1 the first, -1 the last)")
      ->type_name("N");

  auto* exporter = app.add_subcommand("export", "Export results files as JSON (summary cells) or CSV (one row per run)");
  ReportOptionsCli exp;
  exp.format = "json";
  exporter->add_option("results", exp.files, "Results files (.jsonl)")->required()->check(CLI::ExistingFile);
  exporter->add_option("-f,--format", exp.format, "json (default) or csv")->check(CLI::IsMember({"json", "csv"}));
  exporter->add_option("-o,--output", exp.output, "Write to this file (atomically) instead of stdout");
  exporter->add_option("--baseline-python", exp.baseline_python, "Also give each cell's ratio to this build");
  exporter->add_option("--session", exp.session, "Only this session of the file (1 the first, -1 the last)")->type_name("N");

  auto* compare = app.add_subcommand("compare", "Compare two results files cell by cell: B / A of the wall times");
  CompareOptionsCli cmp;
  compare->add_option("a", cmp.a, "Results file A (the reference)")->required()->check(CLI::ExistingFile);
  compare->add_option("b", cmp.b, "Results file B")->required()->check(CLI::ExistingFile);
  compare->add_option("-t,--threshold", cmp.options.threshold_pct,
                       "A cell has changed only when B / A is beyond this many percent (default 10) and p < alpha")
      ->check(CLI::NonNegativeNumber);
  compare->add_option("--by", cmp.options.by, "Match cells by interpreter label (default), python (full version), or minor (3.12, 3.13t)")
      ->check(CLI::IsMember({"label", "python", "minor"}));
  compare->add_option("-f,--format", cmp.format, "text (default), md, json")->check(CLI::IsMember({"text", "md", "json"}));
  compare->add_option("-o,--output", cmp.output, "Write to this file instead of stdout");
  compare->add_option("--alpha", cmp.options.alpha,
                       "Significance level of the Mann-Whitney U test of each cell's wall times (default 0.05): a cell "
                       "has changed only when p is below it and B / A beyond the threshold")
      ->check(CLI::Range(0.0, 1.0));  // 0 and 1 themselves: compare_runs refuses them
  compare->add_option("--session", cmp.session, "Only this session of each file (1 the first, -1 the last)")->type_name("N");
  compare->add_flag("--fail-on-change", cmp.fail_on_change,
                    "Exit with status 1 when a cell changed significantly (p < alpha) beyond the threshold");

  auto* merge = app.add_subcommand("merge", "Combine results files (several machines) into one, labels kept distinct");
  std::vector<std::string> merge_args;
  MergeOptions merge_opts;
  bool merge_force = false;
  merge->add_option("files", merge_args, "OUT then the input files")->required()->expected(2, -1);
  merge->add_option("--tag", merge_opts.tag, "Label tags: auto (label@host where two hosts share a label), host, file, none")
      ->check(CLI::IsMember({"auto", "host", "file", "none"}));
  merge->add_flag("--force", merge_force, "Replace OUT if it exists");

  auto* build = app.add_subcommand("build", "Build CPython (tarball, URL or source tree) into gilhost's data folder; --list, --remove");
  BuildCommand bc;
  build->add_option("source", bc.request.source,
                    "A tarball (.tar.xz, .tar.gz, .tgz, .tar.bz2), its http(s) URL (downloaded into the cache), or a CPython source tree")
      ->type_name("SOURCE");
  build->add_flag("--free-threaded", bc.request.free_threaded, "Configure with --disable-gil (the label ends in t: 3.14.7t)");
  build->add_option("-j,--jobs", bc.request.jobs, "Jobs for make (default: the cores available)")
      ->check(whole_number_at_least(1))->type_name("N");
  build->add_option("--label", bc.request.label, "Name of the build (default: version, t if free-threaded, a suffix for configure arguments)")
      ->type_name("NAME");
  build->add_option("--sha256", bc.request.sha256, "Check the tarball (or download) against this SHA-256")->type_name("HEX");
  build->add_flag("--force", bc.request.force, "Build again even if the same build exists; replace a different one under the label");
  build->add_flag("--list", bc.list, "List the builds made by gilhost build");
  build->add_flag("--json", bc.json, "With --list: print JSON");
  build->add_option("--remove", bc.remove, "Remove the build LABEL")->type_name("LABEL");
  build->footer("Configure arguments go after --, e.g. gilhost build Python-3.14.7.tar.xz --free-threaded -- --with-pydebug\n"
                "Builds go to $XDG_DATA_HOME/gilhost/pythons/LABEL (~/.local/share/gilhost/...), logs to .../gilhost/logs/;\n"
                "gilhost pythons finds them (source \"gilhost build\"). See docs/build.md.");

  std::optional<AsciiTerminal> ascii;  // LC_ALL=C: no ✓ or box drawing on the terminal
  if (!locale_is_utf8()) ascii.emplace();
  if (argc == 1) {
    std::cerr << app.help();
    return 2;
  }
  // CLI11 would say "A subcommand is required" of a misspelt one.
  if (argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string near = nearest_word(argv[1], names);
      std::cerr << "gilhost: unknown command '" << argv[1] << "'"
                << (near.empty() ? "" : "; did you mean '" + near + "'?") << " (commands: " << join(names, ", ") << ")\n"
                << "Run with --help for more information.\n";
      return 2;
    }
  }
  // What follows "--" belongs to someone else: gilhost build's configure arguments, or the arguments of
  // the script gilhost run measures. Kept from CLI11, which would take them for more files.
  int parsed_argc = argc;
  if (argc > 1 && (std::string(argv[1]) == "build" || std::string(argv[1]) == "run")) {
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--") {
        (std::string(argv[1]) == "build" ? bc.request.configure_args : ro.script_args).assign(argv + i + 1, argv + argc);
        parsed_argc = i;
        break;
      }
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string hint = option_hint(app); !hint.empty()) std::cerr << "gilhost: " << hint << "\n";
    return app.exit(e) == 0 ? 0 : 2;
  }
  // A document on stdout (report -f html) is a file's content: its UTF-8 stays.
  if ((*report && rep.format != "text") || (*exporter) || (*compare && cmp.format != "text")) ascii.reset();
  try {
    if (*run) return cmd_run(ro, co);
    if (*check) return cmd_check(check_files, co);
    if (*pythons) return cmd_pythons(co, as_json);
    if (*report) return cmd_report(rep);
    if (*exporter) return cmd_report(exp);
    if (*compare) return cmd_compare(cmp);
    if (*build) return cmd_build(bc);
    if (*merge) {
      for (std::size_t i = 1; i < merge_args.size(); ++i)
        if (!fs::is_regular_file(merge_args[i])) {
          std::cerr << "gilhost: merge: no such file: " << merge_args[i] << "\n";
          return 2;
        }
      return cmd_merge(merge_args.front(), {merge_args.begin() + 1, merge_args.end()}, merge_opts, merge_force);
    }
  } catch (const std::bad_alloc&) {
    out_of_memory();
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
