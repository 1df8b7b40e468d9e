// gilhost: measure Python's concurrency models across every Python build found.
// CLI only: each subcommand hands over to the modules that do the work.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "build/builder.hpp"
#include "build/error.hpp"
#include "build/label.hpp"
#include "build/request.hpp"
#include "build/store.hpp"
#include "config/loader.hpp"
#include "discover/discover.hpp"
#include "discover/selector.hpp"
#include "measure/clock.hpp"
#include "measure/machine.hpp"
#include "report/compare.hpp"
#include "report/export.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/table.hpp"
#include "report/text.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "run/plan.hpp"
#include "run/scheduler.hpp"
#include "util/fd.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"

#ifndef GILHOST_VERSION
#define GILHOST_VERSION "0.1.0"
#endif

namespace fs = std::filesystem;
using namespace gilhost;

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

// gilhost build stops at the next check (its current step's process group killed), its temporary folders
// removed as the stack unwinds, and exits 128+N.
std::atomic<int> g_build_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "written from a signal handler");

extern "C" void on_build_signal(int sig) { g_build_signal.store(sig); }

// CLI11's own range checks print the whole range of a double; these say what is wanted.
CLI::Validator whole_number_at_least(long min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || n < min || n > 1000000000)
          return "'" + v + "' is not a whole number of at least " + std::to_string(min);
        return {};
      },
      "INT>=" + std::to_string(min));
}

CLI::Validator seconds_above_zero() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(d > 0) || !std::isfinite(d))
          return "'" + v + "' is not a number of seconds above 0";
        return {};
      },
      "SECONDS>0");
}

std::string runner_path() {
  if (const char* env = std::getenv("GILHOST_RUNNER"); env && *env) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / "gilhost-runner").string();
}

struct CommonOptions {
  std::vector<std::string> pythons;  // selectors; paths are also probed
  bool no_cache = false;
  bool no_discovery = false;
};

Discovery discover_all(const CommonOptions& o, ProbeCache& cache) {
  DiscoverOptions d;
  for (std::string p : o.pythons)
    if (p.find('/') != std::string::npos) {
      strip_gil_suffix(p);  // a path+gil is that path's build, run with its GIL forced on
      d.explicit_paths.push_back(p);
    }
  if (o.no_discovery) d.use_path = d.use_pyenv = d.use_uv = d.use_gilhost_builds = false;
  return discover(d, cache);
}

std::string fmt_duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

int cmd_pythons(const CommonOptions& o, bool as_json) {
  ProbeCache cache(ProbeCache::default_path(), !o.no_cache);
  Discovery d = discover_all(o, cache);
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& i : d.found) j.push_back(i.to_json());
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  TextTable t({"label", "version", "build", "mode", "source", "executable", "libpython / why not"});
  for (const auto& i : d.found)
    t.add_row({i.label, i.version_full, i.free_threaded ? "free-threaded" : "GIL", i.supported ? i.mode() : "-",
               i.source, i.executable,
               !i.supported ? "unsupported: " + i.unsupported_reason : (i.shared ? i.libpython : "no shared libpython: exec mode")});
  std::cout << t.render();
  for (const auto& p : d.problems) std::cout << "  not usable: " << p.executable << " (" << p.source << "): " << p.reason << "\n";
  if (!o.pythons.empty()) {
    Selection sel = select_interpreters(d.found, o.pythons, nullptr);
    std::cout << "\nselected:";
    for (const auto& i : sel.selected) std::cout << " " << i.label;
    std::cout << "\n";
    for (const auto& s : sel.skipped) std::cout << "  " << s.selector << ": " << s.reason << "\n";
  }
  return 0;
}

int cmd_check(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& f : files) {
    try {
      Experiment ex = load_experiment(f);
      for (const auto& p : ex.profile_names) load_experiment(f, p);  // every profile must load too
      int expects = 0;
      for (const auto& c : ex.cases) expects += static_cast<int>(c.expects.size());
      std::cout << f << ": ok — " << ex.cases.size() << " cases, " << expects << " expectations"
                << (ex.profile_names.empty() ? "" : ", profiles: " + join(ex.profile_names, ", ")) << "\n";
    } catch (const ConfigErrors& e) {
      std::cerr << e.what() << "\n";
      ++bad;
    }
  }
  return bad ? 2 : 0;
}

struct RunOptions {
  std::vector<std::string> files;
  std::string profile;
  bool quick = false;
  std::string output;
  int repeat = 0, warmup = -1;
  double timeout = 0;
  bool show_output = false;
  bool no_details = false;
  bool dry_run = false;
  bool force_exec = false;
};

int run_one(const std::string& file, const RunOptions& ro, const CommonOptions& co, ProbeCache& cache,
            const Discovery& discovery) {
  const std::string profile = ro.quick ? "quick" : ro.profile;
  Experiment ex;
  try {
    ex = load_experiment(file, profile);
  } catch (const ConfigErrors& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (ro.repeat > 0) ex.repeat = ro.repeat;
  if (ro.warmup >= 0) ex.warmup = ro.warmup;
  if (ro.timeout > 0) ex.timeout_s = ro.timeout;

  const std::vector<std::string>& selectors = co.pythons.empty() ? ex.interpreters : co.pythons;
  Selection sel = select_interpreters(discovery.found, selectors, [&](const std::string& path, std::string& reason) {
    auto i = cache.probe(path, "explicit", reason);
    if (i) i->label = i->short_label() + " (" + path + ")";
    return i;
  });
  if (sel.selected.empty()) {
    std::cerr << "gilhost: no interpreter to run " << file << " on:\n";
    for (const auto& s : sel.skipped) std::cerr << "  " << s.selector << ": " << s.reason << "\n";
    return 2;
  }
  if (ro.force_exec)
    for (auto& i : sel.selected) i.shared = false;  // the interpreter itself is the child
  Plan plan = plan_runs(ex, sel.selected);
  if (ro.dry_run) {
    std::cout << ex.name << ": " << plan.runs.size() << " runs (" << ex.cases.size() << " cases x "
              << sel.selected.size() << " interpreters x " << ex.warmup + ex.repeat << " rounds)\n";
    for (const auto& r : plan.runs)
      if (r.round == 0) std::cout << "  " << r.c->name << " @ " << r.interp->label << " [" << r.interp->mode() << "]\n";
    return 0;
  }
  const std::string path = ro.output.empty() ? default_results_path(ex.name) : ro.output;
  ResultsWriter writer(path);
  MetaRecord meta;
  meta.format = kResultsFormat;
  meta.gilhost_version = GILHOST_VERSION;
  meta.started_unix_ns = realtime_ns();
  meta.machine = machine_from_json(machine_metadata());
  meta.experiment = experiment_info(ex.to_json());
  for (const auto& i : sel.selected) meta.interpreters.push_back(build_record(i));
  meta.config_file = fs::absolute(file).string();
  writer.append(meta);

  const bool tty = ::isatty(2);
  SchedulerOptions so;
  so.runner_path = runner_path();
  // Where scripts/http_loops.py finds its C++ load client (a value the user set wins, like GILHOST_RUNNER).
  if (const fs::path load = fs::path(so.runner_path).parent_path() / "gilhost-load"; ::access(load.c_str(), X_OK) == 0)
    ::setenv("GILHOST_LOAD_CLIENT", load.c_str(), 0);
  if (!co.no_cache) so.bootstrap_cache_dir = (fs::path(cache_dir()) / "bootstrap").string();
  so.echo_output = ro.show_output;
  so.interrupt = &g_interrupted;
  if (tty) {
    so.on_start = [&](const Progress& p) {
      std::string eta = p.done > 0 ? ", ETA " + fmt_duration(p.elapsed_s / p.done * (p.total - p.done)) : "";
      std::fprintf(stderr, "\r\033[K[%d/%d] %s @ %s%s (%s%s)", p.done + 1, p.total, p.run->c->name.c_str(),
                   p.run->interp->label.c_str(), p.run->warmup ? " warm-up" : "", fmt_duration(p.elapsed_s).c_str(),
                   eta.c_str());
      std::fflush(stderr);
    };
  }
  SessionResult session = run_session(ex, sel, plan, so, writer);
  if (tty) std::fprintf(stderr, "\r\033[K");

  ReportOptions report_options;
  report_options.details = !ro.no_details;
  report_options.profile_in_title = true;
  const ReportModel model = build_session_report(path, meta, session.skips, session.runs, report_options);
  std::cout << render_text(model) << std::flush;
  if (session.interrupted) {
    std::cerr << "gilhost: interrupted; " << session.skips.size() + session.runs.size() << " finished runs kept in " << path
              << "\n";
    return 130;
  }
  return model.expectation_failures() > 0 ? 1 : 0;
}

int cmd_run(const RunOptions& ro, const CommonOptions& co) {
  if (ro.quick && !ro.profile.empty()) {
    std::cerr << "gilhost: --quick is --profile quick; give one of them\n";
    return 2;
  }
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_terminate);
  std::signal(SIGHUP, on_terminate);
  std::signal(SIGPIPE, SIG_IGN);
  become_subreaper();
  ProbeCache cache(ProbeCache::default_path(), !co.no_cache);
  Discovery discovery = discover_all(co, cache);
  int worst = 0;
  for (const auto& f : ro.files) {
    int rc = run_one(f, ro, co, cache, discovery);
    worst = std::max(worst, rc);
    if (rc == 130) break;
  }
  cache.save();
  return worst;
}

// ---- report, compare, merge, export: results files in, documents out ----

struct ReportOptionsCli {
  std::vector<std::string> files;
  std::string format = "text";  // text, md, html, json, csv
  std::string output;           // "" = stdout
  std::string baseline_python;
  bool no_details = false;
};

// Writes a document to -o FILE (atomically: readers never see half of it) or to stdout.
void emit(const std::string& text, const std::string& output) {
  if (output.empty() || output == "-") {
    std::cout << text << std::flush;
    return;
  }
  const fs::path parent = fs::path(output).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  write_file_atomic(output, text);
  std::cerr << "gilhost: wrote " << output << " (" << format_bytes(static_cast<double>(text.size())) << ")\n";
}

int cmd_report(const ReportOptionsCli& o) {
  MergedResults merged;
  try {
    merged = merge_files(o.files);
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  ReportOptions ro;
  ro.baseline_python = o.baseline_python;
  ro.details = !o.no_details;
  ReportModel model;
  try {
    model = build_report_model(merged, ro);
  } catch (const std::invalid_argument& e) {
    std::cerr << "gilhost: --baseline-python: " << e.what() << "\n";
    return 2;
  }
  std::string text;
  if (o.format == "text") text = render_text(model);
  else if (o.format == "md") text = render_markdown(model);
  else if (o.format == "html") text = render_html(model);
  else if (o.format == "json") text = summary_json(model).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  else text = runs_csv(model);
  emit(text, o.output);
  if (model.malformed_lines) std::cerr << "gilhost: " << model.malformed_lines << " malformed lines skipped\n";
  if (model.sections.empty()) std::cerr << "gilhost: no records in " << join(o.files, ", ") << "\n";
  if (o.format != "text")  // the text report prints its notes itself
    for (const auto& s : model.sections)
      for (const auto& n : s.notes) std::cerr << "gilhost: " << n << "\n";
  return 0;
}

struct CompareOptionsCli {
  std::string a, b;
  CompareOptions options;
  std::string format = "text";  // text, md, json
  std::string output;
  bool fail_on_change = false;
};

int cmd_compare(const CompareOptionsCli& o) {
  MergedResults a, b;
  try {
    a = merge_files({o.a});
    b = merge_files({o.b});
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  Comparison c = compare_runs(a.lines, b.lines, o.options);
  c.path_a = o.a;
  c.path_b = o.b;
  if (o.format == "json") emit(comparison_json(c).dump(2) + "\n", o.output);
  else if (o.format == "md") emit(render_comparison_markdown(c), o.output);
  else emit(render_comparison_text(c), o.output);
  if (c.rows.empty()) {
    std::cerr << "gilhost: no cell of " << o.a << " matches one of " << o.b
              << (o.options.by == "label" ? " (labels differ? try --by python or --by minor)" : "") << "\n";
    return 2;
  }
  return o.fail_on_change && c.flagged() > 0 ? 1 : 0;
}

int cmd_merge(const std::string& out, const std::vector<std::string>& inputs, const MergeOptions& mo, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && !force) {
    std::cerr << "gilhost: " << out << " exists; give --force to replace it (gilhost merge OUT IN...: the first file is the output)\n";
    return 2;
  }
  MergedResults merged;
  try {
    merged = merge_files(inputs, mo);
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  int metas = 0, runs = 0, skips = 0;
  for (const auto& line : merged.lines) {
    metas += std::holds_alternative<MetaRecord>(line);
    runs += std::holds_alternative<RunRecord>(line);
    skips += std::holds_alternative<SkipRecord>(line);
  }
  const fs::path parent = fs::path(out).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  write_file_atomic(out, to_jsonl(merged.lines));
  std::cerr << "gilhost: merged " << inputs.size() << " files (" << metas << " sessions, " << runs << " runs, " << skips
            << " skips) into " << out << "\n";
  if (!merged.relabeled.empty()) std::cerr << "  labels tagged with their host: " << join(merged.relabeled, ", ") << "\n";
  if (merged.malformed_lines) std::cerr << "  " << merged.malformed_lines << " malformed lines skipped\n";
  return 0;
}

// ---- build: CPython into gilhost's data folder ----

int list_builds(const BuildStore& store, bool as_json) {
  const auto builds = store.list();
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : builds)
      j.push_back({{"label", b.label}, {"path", b.path}, {"manifest", b.manifest ? b.manifest->to_json() : nlohmann::json()}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (builds.empty()) {
    std::cout << "no builds in " << store.pythons_dir() << " (gilhost build SOURCE makes one)\n";
    return 0;
  }
  TextTable t({"label", "version", "build", "configure args", "built (UTC)", "took", "source"});
  for (const auto& b : builds) {
    if (!b.manifest) {
      t.add_row({b.label, "?", "?", "", "", "", "no " + std::string(kManifestName) + ": not made by gilhost build"});
      continue;
    }
    const BuildManifest& m = *b.manifest;
    t.add_row({b.label, m.version, m.free_threaded ? "free-threaded" : "GIL", join(m.configure_args, " "), m.built_at,
               fmt_duration(m.build_seconds), m.source});
  }
  std::cout << t.render() << "in " << store.pythons_dir() << "\n";
  return 0;
}

int cmd_build(const BuildCommand& bc) {
  if (const std::string why = command_problem(bc); !why.empty()) {
    std::cerr << "gilhost: build: " << why << "\n";
    return 2;
  }
  const BuildStore store(data_dir());
  if (bc.list) return list_builds(store, bc.json);
  if (!bc.remove.empty()) {
    if (!store.remove(bc.remove)) {
      std::cerr << "gilhost: no build labelled " << bc.remove << " in " << store.pythons_dir() << " (gilhost build --list shows them)\n";
      return 2;
    }
    std::cerr << "gilhost: removed " << bc.remove << " (" << store.build_path(bc.remove) << ")\n";
    return 0;
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, on_build_signal);
  std::signal(SIGPIPE, SIG_IGN);  // a reader of our output that goes away must not kill us mid-build
  BuildEnvironment env;
  env.gilhost_version = GILHOST_VERSION;
  env.downloads_dir = (fs::path(cache_dir()) / "downloads").string();
  env.interrupt = &g_build_signal;
  env.tty = ::isatty(2);
  BuildOutcome out;
  try {
    out = build_python(bc.request, store, env);
  } catch (const BuildError& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    for (const auto& line : e.details) std::cerr << line << "\n";
    return e.exit_code;
  } catch (const std::exception& e) {
    std::cerr << "gilhost: build: " << e.what() << "\n";
    return 1;
  }
  if (!out.built) {
    std::cerr << "gilhost: " << out.label << " is already built from the same source and arguments (" << out.path
              << "); --force builds it again\n";
    return 0;
  }
  for (const auto& w : out.warnings) std::cerr << "gilhost: warning: " << w << "\n";
  const std::string python = (fs::path(out.path) / "bin" / "python3").string();
  // A plain label is also a selector; one with a suffix is not (its version is), its path is.
  const bool plain = out.label == derive_label(out.manifest.version, out.manifest.free_threaded, {});
  std::cerr << "gilhost: built " << out.label << " in " << fmt_duration(out.manifest.build_seconds) << ": " << python << "\n"
            << "gilhost: gilhost pythons lists it; gilhost run CONFIG -p " << (plain ? out.label : python) << " runs on it\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gilhost — measure how Python's concurrency models behave, on every Python build found.\n"
               "Each run is a fresh child process that loads that build's libpython; the host times it from outside."};
  app.set_version_flag("--version", GILHOST_VERSION);
  app.require_subcommand(1);

  CommonOptions co;
  RunOptions ro;
  bool as_json = false;

  auto* run = app.add_subcommand("run", "Run experiment files and print the table of cases x interpreters");
  run->add_option("files", ro.files, "Experiment TOML files (configs/*.toml)")->required()->check(CLI::ExistingFile);
  run->add_option("-p,--python", co.pythons, "Interpreter selector: all, ft, gil, 3.12, 3.12.1, 3.13t, \">=3.11\", or a path (repeatable; overrides the file); "
                  "add +gil (3.14t+gil, ft+gil) to run free-threaded builds with their GIL forced on, as a column of their own");
  run->add_option("--profile", ro.profile, "Apply a [profile.NAME] of the file");
  run->add_flag("-q,--quick", ro.quick, "Same as --profile quick");
  run->add_option("-o,--output", ro.output, "Results file (JSON Lines; default results/NAME-TIMESTAMP.jsonl)");
  run->add_option("--repeat", ro.repeat, "Measured runs per case and interpreter (overrides the file)")->check(whole_number_at_least(1));
  run->add_option("--warmup", ro.warmup, "Warm-up runs, dropped from statistics (overrides the file)")->check(whole_number_at_least(0));
  run->add_option("--timeout", ro.timeout, "Seconds per run before its process tree is killed (overrides the file)")->check(seconds_above_zero());
  run->add_flag("--show-output", ro.show_output, "Copy the scripts' output to stderr as they run");
  run->add_flag("--no-details", ro.no_details, "Print only the grid, not the per-cell details");
  run->add_flag("-n,--dry-run", ro.dry_run, "Show the runs that would be made, run nothing");
  run->add_flag("--exec", ro.force_exec, "Run each interpreter itself as the child (exec mode: no in-process features)");
  run->add_flag("--no-cache", co.no_cache,
                "Probe interpreters again and compile the runner's bootstrap every run, instead of using the caches");

  auto* check = app.add_subcommand("check", "Validate experiment files (errors as file:line:column)");
  std::vector<std::string> check_files;
  check->add_option("files", check_files, "Experiment TOML files")->required();

  auto* pythons = app.add_subcommand("pythons", "List the Python builds found (PATH, pyenv, uv, gilhost build, $GILHOST_PYTHONS)");
  pythons->add_option("-p,--python", co.pythons, "Also probe this path, and show what these selectors pick");
  pythons->add_flag("--json", as_json, "Print JSON");
  pythons->add_flag("--no-cache", co.no_cache, "Probe again instead of using the cache");

  auto* report = app.add_subcommand("report", "Render results files: the table, or Markdown, HTML, JSON or CSV");
  ReportOptionsCli rep;
  report->add_option("results", rep.files, "Results files (.jsonl); several are merged (see merge) into one report")
      ->required()->check(CLI::ExistingFile);
  report->add_option("-f,--format", rep.format, "text (default), md, html (one self-contained page), json (summary cells), csv (one row per run)")
      ->check(CLI::IsMember({"text", "md", "html", "json", "csv"}));
  report->add_option("-o,--output", rep.output, "Write to this file (atomically) instead of stdout");
  report->add_option("--baseline-python", rep.baseline_python, "Add a column 'vs SEL' per cell: wall / wall of this build (3.12, 3.13t, a label), paired by repeat");
  report->add_flag("--no-details", rep.no_details, "Only the grid, not the per-cell details");

  auto* exporter = app.add_subcommand("export", "Export results files as JSON (summary cells) or CSV (one row per run)");
  ReportOptionsCli exp;
  exp.format = "json";
  exporter->add_option("results", exp.files, "Results files (.jsonl)")->required()->check(CLI::ExistingFile);
  exporter->add_option("-f,--format", exp.format, "json (default) or csv")->check(CLI::IsMember({"json", "csv"}));
  exporter->add_option("-o,--output", exp.output, "Write to this file (atomically) instead of stdout");
  exporter->add_option("--baseline-python", exp.baseline_python, "Also give each cell's ratio to this build");

  auto* compare = app.add_subcommand("compare", "Compare two results files cell by cell: B / A of the wall times");
  CompareOptionsCli cmp;
  compare->add_option("a", cmp.a, "Results file A (the reference)")->required()->check(CLI::ExistingFile);
  compare->add_option("b", cmp.b, "Results file B")->required()->check(CLI::ExistingFile);
  compare->add_option("-t,--threshold", cmp.options.threshold_pct, "Flag changes beyond this many percent (default 10)")
      ->check(CLI::NonNegativeNumber);
  compare->add_option("--by", cmp.options.by, "Match cells by interpreter label (default), python (full version), or minor (3.12, 3.13t)")
      ->check(CLI::IsMember({"label", "python", "minor"}));
  compare->add_option("-f,--format", cmp.format, "text (default), md, json")->check(CLI::IsMember({"text", "md", "json"}));
  compare->add_option("-o,--output", cmp.output, "Write to this file instead of stdout");
  compare->add_flag("--fail-on-change", cmp.fail_on_change, "Exit with status 1 when a change is beyond the threshold");

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

  // CLI11 would say "A subcommand is required" of a misspelt one.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::cerr << "gilhost: unknown command '" << argv[1] << "' (commands: " << join(names, ", ") << ")\n"
                << "Run with --help for more information.\n";
      return 2;
    }
  }
  // gilhost build's configure arguments: everything after "--", kept from CLI11, which would take them
  // for more SOURCEs.
  int parsed_argc = argc;
  if (argc > 1 && std::string(argv[1]) == "build") {
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--") {
        bc.request.configure_args.assign(argv + i + 1, argv + argc);
        parsed_argc = i;
        break;
      }
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*run) return cmd_run(ro, co);
    if (*check) return cmd_check(check_files);
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
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
