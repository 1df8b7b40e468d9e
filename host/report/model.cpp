#include "report/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include "discover/selector.hpp"
#include "report/build_facts.hpp"
#include "report/comparable.hpp"
#include "report/metrics.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace gilhost {

namespace {

// Which builds of a section the selector names, per host: an exact label, or a version spec with
// an optional "t" for free-threaded builds and "+gil" for those run with their GIL forced on (the newest
// match on each host).
std::map<std::string, std::string> resolve_baseline(const Section& s, const std::string& selector) {
  std::map<std::string, std::string> by_host;
  for (const auto& b : s.builds)
    if (b.label == selector || b.original_label == selector) by_host.emplace(b.host, b.label);
  if (!by_host.empty()) return by_host;
  std::string spec_text = selector;
  const bool forced = strip_gil_suffix(spec_text);
  const bool ft = !spec_text.empty() && spec_text.back() == 't';
  if (ft) spec_text.pop_back();
  VersionSpec spec = VersionSpec::parse(spec_text);  // throws std::invalid_argument
  std::map<std::string, Version> best;
  for (const auto& b : s.builds) {
    auto v = Version::parse(b.version);
    if (!v || b.free_threaded != ft || b.gil_forced != forced || !spec.matches(*v)) continue;
    auto it = best.find(b.host);
    if (it == best.end() || it->second < *v) {
      best[b.host] = *v;
      by_host[b.host] = b.label;
    }
  }
  return by_host;
}

// The case's ratio: of the metric it compares by (timeit's time per loop), else of wall time.
RatioStat case_ratio(Section& s, const std::string& case_name, const Cell& num, const Cell& den) {
  for (const auto& c : s.experiment_meta.cases)
    if (c.name == case_name && !c.compare.empty()) {
      const std::string note = "compared: " + c.compare_what + " (metric " + c.compare + "), not the wall time";
      if (std::find(s.notes.begin(), s.notes.end(), note) == s.notes.end()) s.notes.push_back(note);
      return metric_ratio(num.runs, den.runs, c.compare);
    }
  return wall_ratio(num.runs, den.runs);
}

void compute_vs_baseline(Section& s, const std::string& selector) {
  s.baseline_python = selector;
  const auto by_host = resolve_baseline(s, selector);
  if (by_host.empty()) {
    s.notes.push_back("no build of " + s.experiment + " matches --baseline-python " + selector);
    return;
  }
  std::vector<std::string> across;
  for (const auto& b : s.builds) {
    auto it = by_host.find(b.host);
    if (it != by_host.end()) {
      s.baseline_of[b.label] = it->second;
    } else if (by_host.size() == 1) {  // the only one there is, on another machine
      s.baseline_of[b.label] = by_host.begin()->second;
      across.push_back(b.label);
    }
  }
  if (!across.empty())
    s.notes.push_back("vs " + selector + " of " + join(across, ", ") + " divides by a run on another machine (" +
                      by_host.begin()->first + "): it compares the machines as much as the builds");
  for (const auto& [key, cell] : s.summary.cells) {
    auto base = s.baseline_of.find(key.second);
    if (base == s.baseline_of.end()) continue;
    const Cell* b = s.summary.cell(key.first, base->second);
    if (!b) continue;
    RatioStat r = case_ratio(s, key.first, cell, *b);
    if (r.valid()) s.vs_baseline[key] = r;
  }
}

// A build no meta lists (a file cut before its header): what its runs say.
BuildInfo build_info(const RunRecord& r) {
  BuildInfo b;
  b.label = r.interpreter;
  b.original_label = r.original_interpreter;
  b.host = r.origin.host;
  b.version = r.python;
  b.free_threaded = r.free_threaded;
  b.gil_forced = r.gil_forced;
  b.mode = r.mode;
  b.executable = r.executable;
  return b;
}

// Sessions merged (one per CI job, one per machine): builds by host, then version, whatever the order the
// files were given in.
void order_builds_by_host(Section& s) {
  std::map<std::string, std::size_t> host_rank;
  std::map<std::string, std::tuple<std::size_t, long, bool, std::string>> key;
  for (const auto& r : s.runs) {
    if (key.count(r.interpreter)) continue;
    host_rank.emplace(r.origin.host, host_rank.size());
    auto v = Version::parse(r.python);
    key[r.interpreter] = {host_rank[r.origin.host], v ? v->key() : 0L, r.free_threaded, r.interpreter};
  }
  std::stable_sort(s.summary.interpreters.begin(), s.summary.interpreters.end(),
                   [&](const std::string& a, const std::string& b) { return key[a] < key[b]; });
}

void collect_builds(Section& s) {
  std::map<std::string, BuildInfo> known;
  for (const auto& m : s.metas)
    for (const auto& b : m.interpreters) known.emplace(b.label, BuildInfo{b, m.machine ? m.machine->hostname : ""});
  for (const auto& label : s.summary.interpreters) {
    if (auto it = known.find(label); it != known.end()) {
      s.builds.push_back(it->second);
      continue;
    }
    const auto run = std::find_if(s.runs.begin(), s.runs.end(), [&](const RunRecord& r) { return r.interpreter == label; });
    if (run != s.runs.end()) s.builds.push_back(build_info(*run));
  }
}

std::string column_heading(const Section& s, const std::string& label) {
  const BuildInfo* b = s.build(label);
  bool exec = b && b->mode == "exec";
  for (const auto& [key, cell] : s.summary.cells)
    if (key.second == label && cell.mode == "exec") exec = true;
  const std::string reenabled = gil_reenabled_text(s.summary, label);
  return label + (exec ? " (exec)" : "") + (reenabled.empty() ? "" : " (" + reenabled + ")");
}

Grid build_grid(const Section& s) {
  Grid g;
  const Summary& sum = s.summary;
  for (const auto& i : sum.interpreters) {
    auto base = s.baseline_of.find(i);
    g.columns.push_back({i, column_heading(s, i), base != s.baseline_of.end() && base->second == i});
  }
  g.cases = sum.cases;
  for (const auto& c : sum.cases) {
    std::vector<GridCell> row;
    for (const auto& i : sum.interpreters) {
      GridCell cell;
      if (const Cell* data = sum.cell(c, i)) {
        cell.state = data->runs.empty() ? GridCell::State::warmup_only : GridCell::State::measured;
        cell.wall = wall_cell_text(*data);
        // No result to show: how parallel the run was says more than "-".
        // Each number says what it is: the result under its show key ("parallelism 0.90") or "result".
        cell.result = data->result_text == "-" && data->wall_s.n > 0 ? fmt::format("cpu/wall {:.2f}", data->cpu_per_wall.median)
                      : data->result_text == "-" || data->wall_s.n == 0 || !has_result(*data) ? data->result_text
                                                   : result_label(s.experiment_meta, c) + " " + data->result_text;
        cell.mark = verdict_mark(*data);
        cell.expectations_ok = data->expectations_ok();
        cell.statuses = data->statuses;
        // A cell whose every run failed already says so ("did not run", the error's type): not "[error]" again.
        const bool only_errors = data->wall_s.n == 0 && data->statuses == "error";
        cell.show_statuses = data->statuses != "ok" && data->result_text != data->statuses && !only_errors;
        auto base = s.baseline_of.find(i);
        if (base != s.baseline_of.end() && base->second != i) cell.vs_baseline = vs_baseline_text(s, c, i);
      }
      row.push_back(cell);
    }
    g.cells.push_back(row);
  }
  return g;
}

Table build_details(const Section& s) {
  const bool vs = s.compares_builds();
  const bool gil_wait = s.has_thread_states();  // files without thread states keep their table as it was
  Table t;
  const Align R = Align::right;
  t.columns = {Column("case"),     Column("build", Align::left, true, "python"), Column("runs", R), Column("wall median", R),
               Column("min–max", R).dropped_at(7), Column("cpu/wall", R)};
  if (gil_wait) t.columns.emplace_back("GIL wait", R);
  t.columns.emplace_back("init", R, false);
  t.columns.emplace_back("ratio", R).dropped_at(s.summary.baseline.empty() ? 10 : 0);  // all "-" without a baseline case
  if (vs) t.columns.emplace_back("vs " + s.baseline_python, R, false);
  // Left out first where the terminal is narrow (report/fit): the higher, the sooner.
  for (const auto& [title, drop] : {std::pair{"peak RSS", 4}, {"maxrss", 9}, {"threads", 6}, {"procs", 8}})
    t.columns.emplace_back(title, R).dropped_at(drop);
  t.columns.emplace_back("gil").dropped_at(5);
  t.columns.emplace_back("status");
  const Summary& sum = s.summary;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters) {
      const Cell* cell = sum.cell(c, i);
      if (!cell || cell->runs.empty()) continue;
      // "-" where no run has a wall time (its case never started, e.g. a subinterpreter that could not be created).
      const bool timed = cell->wall_s.n > 0;
      std::vector<std::string> row{c,
                                   i,
                                   std::to_string(cell->runs.size()),
                                   timed ? seconds_figure(cell->wall) + (cell->stability.unstable() ? " !" : "") : "-",
                                   timed ? format_seconds(cell->wall_s.min) + "–" + format_seconds(cell->wall_s.max) : "-",
                                   timed ? fmt::format("{:.2f}", cell->cpu_per_wall.median) : "-"};
      if (gil_wait) row.push_back(gil_wait_text(cell->threads));
      row.push_back(format_seconds(cell->init_s.median));
      // The runs column has the n; the baseline case against itself is "base".
      row.push_back(cell->baseline_case ? "base" : cell->ratio_estimate ? ratio_cell(*cell->ratio_estimate, false) : "-");
      if (vs) row.push_back(vs_baseline_text(s, c, i));
      for (const auto& x : {format_bytes(cell->peak_tree_rss_bytes), format_bytes(cell->max_rss_bytes),
                            std::to_string(cell->peak_threads), std::to_string(cell->peak_processes), gil_text(*cell),
                            cell->statuses})
        row.push_back(x);
      t.add_row(row);
    }
  return t;
}

Table build_vs_baseline(const Section& s) {
  Table t;
  t.columns.emplace_back("case", Align::left, true, "vs " + s.baseline_python);
  for (const auto& i : s.summary.interpreters) t.columns.emplace_back(i);
  for (const auto& c : s.summary.cases) {
    std::vector<std::string> row{c};
    for (const auto& i : s.summary.interpreters) row.push_back(s.summary.cell(c, i) ? vs_baseline_text(s, c, i) : "skipped");
    t.add_row(row);
  }
  return t;
}

std::string cores_text(const MachineRecord& m) {
  std::string cores = std::to_string(m.cores);
  if (m.online_cpus && m.online_cpus != m.cores) cores += fmt::format(" (of {} online)", m.online_cpus);
  return cores;
}

Table build_machines(const Section& s) {
  Table t = Table::with_columns({"host", "CPU", "cores", "kernel", "arch", "memory", "builds measured there"},
                                {Align::left, Align::left, Align::right, Align::left, Align::left, Align::right, Align::left});
  for (const auto& m : s.machines)
    t.add_row({m.hostname, m.cpu_model, cores_text(m), m.kernel, m.arch,
               m.memory_bytes > 0 ? format_bytes(static_cast<double>(m.memory_bytes)) : "-",
               join(s.builds_on(m.hostname), ", ")});
  return t;
}

// Figures side by side from several machines (one CI job per Python, merged): say which columns share one.
std::string machines_note(const Section& s) {
  std::vector<std::string> groups;
  for (const auto& m : s.machines)
    groups.push_back(join(s.builds_on(m.hostname), ", ") + " on " + host_label(m));
  return "these columns come from " + std::to_string(s.machines.size()) + " machines: " + join(groups, "; ") +
         ". Only columns measured on one machine compare builds; across machines the machines differ too "
         "(measure the builds in one session, -p A -p B, for ratios)";
}

// Runs whose virtual machine's host took ThreadStates::kNotableSteal or more of its CPUs (steal): what it did to
// their figures, or "" where none did.
std::string steal_note(const Section& s) {
  double most = 0;
  int runs = 0, measured = 0;
  for (const auto& r : s.runs) {
    if (!r.measured_ok()) continue;
    ++measured;
    const double share = r.thread_states && r.thread_states->steal_share ? *r.thread_states->steal_share : 0.0;
    if (share < ThreadStates::kNotableSteal) continue;
    ++runs;
    most = std::max(most, share);
  }
  if (runs == 0) return "";
  return fmt::format("the virtual machine's host took up to {:.0f} % of its CPUs (steal) in {} of {} measured runs: "
                     "their wall times include that wait, their CPU times leave it out, and their thread states "
                     "count an estimate of it as time on a CPU (docs/results-format.md, \"Steal\")",
                     100 * most, runs, measured);
}

// A run of other sizes than the article's: its views lose the article's figure, and the notes say why.
void mark_incomparable(Section& s) {
  const auto changes = param_changes(s.experiment_meta.document);
  bool has_article = !s.experiment_meta.article.empty();
  for (const auto& h : s.headlines) has_article = has_article || h.spec.article;
  if (changes.empty() || !has_article) return;
  s.article_caveat = not_comparable_text(changes);
  for (auto& h : s.headlines)
    if (h.spec.article) {
      h.spec.article.reset();
      h.article_text = "not comparable";
    }
  s.notes.push_back(s.article_caveat + " (" + (s.profile().empty() ? "--param" : "profile " + s.profile()) +
                    " changed the sizes), so no view shows the article's figure.");
}

Table build_article(const Section& s) {
  Table t = Table::with_columns({"case", "the article"});
  for (const auto& [k, v] : s.experiment_meta.article) t.add_row({k, v.is_string() ? v.get<std::string>() : v.dump()});
  return t;
}

std::vector<FailureLine> build_failures(const Summary& sum) {
  std::vector<FailureLine> out;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters)
      if (const Cell* cell = sum.cell(c, i))
        for (const auto& f : cell->failures) out.push_back({c, i, f, cell->runs_failed_expectations, cell->runs.size()});
  return out;
}

// One line per cell whose wall median fell short of the experiment's precision target.
std::vector<std::string> precision_notes(const Summary& sum) {
  std::vector<std::string> out;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters)
      if (const Cell* cell = sum.cell(c, i); cell && !cell->runs.empty())
        if (auto note = precision_note(c + " @ " + i, cell->precision); !note.empty()) out.push_back(std::move(note));
  return out;
}

// One line per cell whose GIL wait is "?": why it is unknown.
std::vector<std::string> gil_unknown_notes(const Summary& sum) {
  std::vector<std::string> out;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters)
      if (const Cell* cell = sum.cell(c, i); cell && cell->threads && !cell->threads->gil_wait && !cell->threads->gil_unknown_why.empty())
        out.push_back(c + " @ " + i + ": GIL wait ? — " + cell->threads->gil_unknown_why);
  return out;
}

std::string runs_per_cell_text(const ExperimentInfo& ex) {
  if (!ex.repeat) return "";
  // With a precision target, the count is where a cell starts: each cell's n is in the grid.
  if (ex.precision && *ex.precision > 0)
    return fmt::format("{} measured run{} per cell or more, until its median is known to ±{:g} % or its time budget is "
                       "spent; {} warm-up",
                       *ex.repeat, *ex.repeat == 1 ? "" : "s", *ex.precision * 100, ex.warmup);
  return fmt::format("{} measured run{} per cell, {} warm-up", *ex.repeat, *ex.repeat == 1 ? "" : "s", ex.warmup);
}

// Everything a section shows, from its records.
void complete_section(Section& s, const std::string& name, const ReportOptions& options) {
  const ExperimentInfo& ex = s.experiment_meta;
  std::map<std::string, std::string> show;
  for (const auto& c : ex.cases)
    if (!c.show.empty()) show[c.name] = c.show;
  s.summary = summarize(s.runs, s.skips, ex.baseline, show, ex);
  if (s.summary.experiment.empty()) s.summary.experiment = name;
  s.title = s.summary.experiment + (options.profile_in_title && !ex.profile.empty() ? " (profile " + ex.profile + ")" : "");

  std::set<std::string> hosts;
  for (const auto& m : s.metas)
    if (m.machine && hosts.insert(m.machine->hostname).second) s.machines.push_back(*m.machine);
  if (s.metas.size() > 1) order_builds_by_host(s);
  collect_builds(s);

  s.description = ex.description;
  if (!s.metas.empty()) s.machine = s.metas.front().machine;
  s.details = options.details;
  if (!options.baseline_python.empty()) compute_vs_baseline(s, options.baseline_python);
  else if (is_adhoc(ex) && s.builds.size() > 1) compute_vs_baseline(s, s.builds.front().label);  // as `run` printed it

  s.grid = build_grid(s);
  s.details_table = build_details(s);
  if (s.compares_builds()) s.vs_baseline_table = build_vs_baseline(s);
  s.machines_table = build_machines(s);
  if (s.multi_host()) s.notes.insert(s.notes.begin(), machines_note(s));
  for (auto& note : leftover_notes(s.summary)) s.notes.push_back(std::move(note));
  if (std::string steal = steal_note(s); !steal.empty()) s.notes.push_back(std::move(steal));
  for (const auto& label : s.summary.interpreters)
    if (const std::string reenabled = gil_reenabled_text(s.summary, label); !reenabled.empty())
      s.notes.push_back(label + ": " + reenabled + " — an extension without free-threading support turned it back on, so "
                        "its figures are a GIL build's");
  s.unstable = unstable_notes(s.summary);
  s.precision_notes = precision_notes(s.summary);
  s.gil_unknown = gil_unknown_notes(s.summary);
  s.article_table = build_article(s);
  s.scaling = build_scaling(s.summary, ex.cases, s.machine ? s.machine->cores : 0);
  s.headlines = build_headlines(s.summary, ex.views);
  mark_incomparable(s);
  s.headlines_table = headlines_table(s.headlines, s.summary.interpreters);
  s.metrics_table = build_metrics_table(s.summary, ex);
  s.metric_sources = extract_sources(ex);
  s.readings = build_readings(s.summary);
  s.failures = build_failures(s.summary);
  s.failed_cells = collect_failures(s.runs);
  s.skip_groups = group_skips(s.skips);
  s.runs_per_cell = runs_per_cell_text(ex);
  s.params = params_text(ex.params);
}

}  // namespace

std::string grid_cell_text(const GridCell& cell, const std::string& separator) {
  if (cell.state == GridCell::State::skipped) return "skipped";
  if (cell.state == GridCell::State::warmup_only) return "(warm-up only)";
  std::string text = cell.wall + separator + cell.result + (cell.mark.empty() ? "" : " " + cell.mark);
  if (cell.show_statuses) text += fmt::format(" [{}]", cell.statuses);
  return text;
}

std::vector<std::string> Section::builds_on(const std::string& host) const {
  std::vector<std::string> labels;
  for (const auto& b : builds)
    if (b.host == host) labels.push_back(b.label);
  return labels;
}

bool Section::has_thread_states() const {
  return std::any_of(summary.cells.begin(), summary.cells.end(), [](const auto& kv) { return kv.second.threads.has_value(); });
}

const BuildInfo* Section::build(const std::string& label) const {
  for (const auto& b : builds)
    if (b.label == label) return &b;
  return nullptr;
}

const RunRecord* Section::median_run(const std::string& case_name, const std::string& interpreter) const {
  const Cell* c = summary.cell(case_name, interpreter);
  if (!c || c->runs.empty()) return nullptr;
  std::vector<const RunRecord*> ranked;
  for (const auto& r : c->runs)
    if (r.is_ok()) ranked.push_back(&r);
  if (ranked.empty())
    for (const auto& r : c->runs) ranked.push_back(&r);
  std::sort(ranked.begin(), ranked.end(), [](const RunRecord* a, const RunRecord* b) { return a->wall_ns < b->wall_ns; });
  return ranked[(ranked.size() - 1) / 2];
}

int ReportModel::measured_runs() const {
  int measured = 0;
  for (const auto& s : sections)
    for (const auto& [k, c] : s.summary.cells) measured += static_cast<int>(c.runs.size());
  return measured;
}

int ReportModel::expectation_failures() const {
  int failures = 0;
  for (const auto& s : sections) failures += s.summary.expectation_failures;
  return failures;
}

ReportModel build_session_report(const std::string& path, const MetaRecord& meta, const std::vector<SkipRecord>& skips,
                                 const std::vector<RunRecord>& runs, const ReportOptions& options) {
  // In the file's order: the meta, the skips, the runs; tagged as merge tags a file it reads.
  LoadedResults written;
  written.path = path;
  written.lines.emplace_back(meta);
  written.lines.insert(written.lines.end(), skips.begin(), skips.end());
  written.lines.insert(written.lines.end(), runs.begin(), runs.end());
  return build_report_model(merge_results({written}), options);
}

ReportModel build_report_model(const MergedResults& merged, const ReportOptions& options) {
  ReportModel model;
  model.files = merged.sources;
  model.relabeled = merged.relabeled;
  model.malformed_lines = merged.malformed_lines;
  model.baseline_python = options.baseline_python;

  std::vector<std::string> order;
  std::map<std::string, Section> sections;
  auto section = [&](const std::string& name) -> Section& {
    if (!sections.count(name)) {
      order.push_back(name);
      sections[name].experiment = name;
    }
    return sections[name];
  };
  for (const auto& line : merged.lines) {
    if (const auto* meta = std::get_if<MetaRecord>(&line)) {
      Section& s = section(meta->experiment.name);
      if (s.metas.empty()) s.experiment_meta = meta->experiment;
      s.metas.push_back(*meta);
      add_unique(s.sources, meta->source);
    } else if (const auto* run = std::get_if<RunRecord>(&line)) {
      Section& s = section(run->experiment);
      s.runs.push_back(*run);
      add_unique(s.sources, run->origin.source);
    } else {
      const auto& skip = std::get<SkipRecord>(line);
      Section& s = section(skip.experiment);
      s.skips.push_back(skip);
      add_unique(s.sources, skip.origin.source);
    }
  }

  for (const auto& name : order) {
    Section& s = sections[name];
    complete_section(s, name, options);
    model.sections.push_back(std::move(s));
  }
  return model;
}

bool checks_expectations(const Cell& c) {
  // "status ok" is checked where nothing else is said (config/expect): alone, its ✓ says nothing.
  return std::any_of(c.runs.begin(), c.runs.end(), [](const RunRecord& r) {
    return std::any_of(r.expect.begin(), r.expect.end(), [](const auto& e) { return e.expect != "status ok"; });
  });
}

std::string verdict_mark(const Cell& c) {
  // Only "status ok": no mark either way (a cell that failed it says its error, not an expectation).
  if (c.runs.empty() || !checks_expectations(c)) return "";
  return c.expectations_ok() ? "✓" : "✗";
}

std::string vs_baseline_text(const Section& s, const std::string& case_name, const std::string& interpreter) {
  auto base = s.baseline_of.find(interpreter);
  if (base == s.baseline_of.end()) return "-";
  if (base->second == interpreter) return "base";
  auto it = s.vs_baseline.find({case_name, interpreter});
  return it == s.vs_baseline.end() ? "-" : format_ratio(it->second);
}

std::string host_label(const MachineRecord& machine) { return machine.hostname.empty() ? "?" : machine.hostname; }

std::string machine_summary(const MachineRecord& m) {
  std::string out = fmt::format("{} · {} cores", m.cpu_model, m.cores);
  if (m.online_cpus && m.online_cpus != m.cores) out += fmt::format(" (of {} online)", m.online_cpus);
  if (!m.kernel.empty()) out += " · " + m.kernel;
  if (!m.arch.empty()) out += " · " + m.arch;
  if (m.memory_bytes > 0) out += " · " + format_bytes(static_cast<double>(m.memory_bytes)) + " RAM";
  return out;
}

std::string params_text(const nlohmann::json& params) {
  if (!params.is_object() || params.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [k, v] : params.items()) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  return join(parts, ", ");
}

std::vector<SkipGroup> group_skips(const std::vector<SkipRecord>& skips) {
  std::vector<SkipGroup> out;
  for (const auto& k : skips) {
    auto it = std::find_if(out.begin(), out.end(), [&](const SkipGroup& g) { return g.reason == k.reason; });
    if (it == out.end()) {
      out.push_back({k.reason, {}, {}});
      it = out.end() - 1;
    }
    add_unique(it->cases, k.case_name.substr(0, k.case_name.find('[')));
    add_unique(it->builds, k.build());
  }
  return out;
}

}  // namespace gilhost
