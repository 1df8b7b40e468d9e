// gilhost: measure Python's concurrency models across every Python build found.
// CLI only: each subcommand hands over to the modules that do the work.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config/loader.hpp"
#include "discover/discover.hpp"
#include "discover/selector.hpp"
#include "measure/clock.hpp"
#include "measure/machine.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "run/plan.hpp"
#include "run/results_file.hpp"
#include "run/scheduler.hpp"
#include "util/strings.hpp"

#ifndef GILHOST_VERSION
#define GILHOST_VERSION "0.1.0"
#endif

namespace fs = std::filesystem;
using namespace gilhost;

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  // A second Ctrl-C ends gilhost at once.
  std::signal(SIGINT, SIG_DFL);
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
  for (const auto& p : o.pythons)
    if (p.find('/') != std::string::npos) d.explicit_paths.push_back(p);
  if (o.no_discovery) d.use_path = d.use_pyenv = d.use_uv = false;
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
  nlohmann::json interps = nlohmann::json::array();
  for (const auto& i : sel.selected) interps.push_back(i.to_json());
  writer.append({{"type", "meta"},
                 {"format", 1},
                 {"gilhost_version", GILHOST_VERSION},
                 {"started_unix_ns", realtime_ns()},
                 {"machine", machine_metadata()},
                 {"experiment", ex.to_json()},
                 {"interpreters", interps},
                 {"config_file", fs::absolute(file).string()}});

  const bool tty = ::isatty(2);
  SchedulerOptions so;
  so.runner_path = runner_path();
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

  std::map<std::string, std::string> show;
  for (const auto& c : ex.cases)
    if (!c.show.empty()) show[c.name] = c.show;
  Summary summary = summarize(session.records, ex.baseline, show);
  summary.experiment = ex.name + (ex.profile.empty() ? "" : " (profile " + ex.profile + ")");
  ReportContext ctx;
  ctx.description = ex.description;
  ctx.machine = machine_metadata();
  ctx.article = ex.article;
  ctx.results_path = path;
  ctx.details = !ro.no_details;
  std::cout << render_report(summary, ctx) << std::flush;
  if (session.interrupted) {
    std::cerr << "gilhost: interrupted; " << session.records.size() << " finished runs kept in " << path << "\n";
    return 130;
  }
  return summary.expectation_failures > 0 ? 1 : 0;
}

int cmd_run(const RunOptions& ro, const CommonOptions& co) {
  if (ro.quick && !ro.profile.empty()) {
    std::cerr << "gilhost: --quick is --profile quick; give one of them\n";
    return 2;
  }
  std::signal(SIGINT, on_sigint);
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

int cmd_report(const std::vector<std::string>& files, bool no_details) {
  for (const auto& f : files) {
    ResultsSet set;
    try {
      set = read_results(f);
    } catch (const std::exception& e) {
      std::cerr << "gilhost: " << e.what() << "\n";
      return 2;
    }
    nlohmann::json ex = set.metas.empty() ? nlohmann::json::object() : set.metas.front().value("experiment", nlohmann::json::object());
    std::map<std::string, std::string> show;
    for (const auto& c : ex.value("cases", nlohmann::json::array()))
      if (!c.value("show", "").empty()) show[c.value("name", "")] = c.value("show", "");
    Summary summary = summarize(set.records, ex.value("baseline", ""), show);
    ReportContext ctx;
    ctx.description = ex.value("description", "");
    ctx.machine = set.metas.empty() ? nlohmann::json() : set.metas.front().value("machine", nlohmann::json());
    ctx.article = ex.value("article", nlohmann::json::object());
    ctx.results_path = f;
    ctx.details = !no_details;
    std::cout << render_report(summary, ctx);
    if (set.malformed_lines) std::cerr << f << ": " << set.malformed_lines << " malformed lines skipped\n";
  }
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
  run->add_option("-p,--python", co.pythons, "Interpreter selector: all, ft, gil, 3.12, 3.12.1, 3.13t, \">=3.11\", or a path (repeatable; overrides the file)");
  run->add_option("--profile", ro.profile, "Apply a [profile.NAME] of the file");
  run->add_flag("-q,--quick", ro.quick, "Same as --profile quick");
  run->add_option("-o,--output", ro.output, "Results file (JSON Lines; default results/NAME-TIMESTAMP.jsonl)");
  run->add_option("--repeat", ro.repeat, "Measured runs per case and interpreter (overrides the file)")->check(CLI::PositiveNumber);
  run->add_option("--warmup", ro.warmup, "Warm-up runs, dropped from statistics (overrides the file)")->check(CLI::NonNegativeNumber);
  run->add_option("--timeout", ro.timeout, "Seconds per run before its process tree is killed (overrides the file)")->check(CLI::PositiveNumber);
  run->add_flag("--show-output", ro.show_output, "Copy the scripts' output to stderr as they run");
  run->add_flag("--no-details", ro.no_details, "Print only the grid, not the per-cell details");
  run->add_flag("-n,--dry-run", ro.dry_run, "Show the runs that would be made, run nothing");
  run->add_flag("--exec", ro.force_exec, "Run each interpreter itself as the child (exec mode: no in-process features)");
  run->add_flag("--no-cache", co.no_cache, "Probe interpreters again instead of using the cache");

  auto* check = app.add_subcommand("check", "Validate experiment files (errors as file:line:column)");
  std::vector<std::string> check_files;
  check->add_option("files", check_files, "Experiment TOML files")->required();

  auto* pythons = app.add_subcommand("pythons", "List the Python builds found (PATH, pyenv, uv, $GILHOST_PYTHONS)");
  pythons->add_option("-p,--python", co.pythons, "Also probe this path, and show what these selectors pick");
  pythons->add_flag("--json", as_json, "Print JSON");
  pythons->add_flag("--no-cache", co.no_cache, "Probe again instead of using the cache");

  auto* report = app.add_subcommand("report", "Print the table of a results file");
  std::vector<std::string> report_files;
  bool report_no_details = false;
  report->add_option("results", report_files, "Results files (.jsonl)")->required()->check(CLI::ExistingFile);
  report->add_flag("--no-details", report_no_details, "Print only the grid");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*run) return cmd_run(ro, co);
    if (*check) return cmd_check(check_files);
    if (*pythons) return cmd_pythons(co, as_json);
    if (*report) return cmd_report(report_files, report_no_details);
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
