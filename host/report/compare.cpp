#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "report/fit.hpp"
#include "report/metrics.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "report/threads.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace gilhost {

namespace {

// Compare's Markdown keeps line breaks out of its one-line cells, and lets names keep their * and `.
std::string md_escape(const std::string& s) {
  return replace_characters(s, {{'|', "\\|"}, {'\n', " "}, {'\r', " "}, {'<', "&lt;"}, {'>', "&gt;"}});
}

std::string machine_line(const MachineRecord& m) {
  return fmt::format("{}: {}, {} cores, {}", m.hostname, m.cpu_model, m.cores, m.kernel);
}

std::vector<MachineRecord> machines_of(const std::vector<ResultsLine>& lines) {
  std::vector<MachineRecord> out;
  std::set<std::string> seen;
  for (const auto& line : lines)
    if (const auto* meta = std::get_if<MetaRecord>(&line); meta && meta->machine)
      if (seen.insert(meta->machine->hostname).second) out.push_back(*meta->machine);
  return out;
}

std::vector<SessionStamp> sessions_of(const std::vector<ResultsLine>& lines) {
  std::vector<SessionStamp> out;
  for (const auto& line : lines)
    if (const auto* meta = std::get_if<MetaRecord>(&line)) {
      SessionStamp s{meta->machine ? meta->machine->hostname : "", meta->started_unix_ns};
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  return out;
}

std::vector<double> wall_seconds(const std::vector<RunRecord>& runs) {
  std::vector<double> w;
  for (const auto& r : runs)
    if (r.measured_ok()) w.push_back(static_cast<double>(r.wall_ns) / 1e9);
  return w;
}

// The cell's verdict: the ratio beyond the threshold and the rank-sum test below alpha, both.
void judge(CompareRow& row, const std::vector<double>& a, const std::vector<double>& b, const CompareOptions& options) {
  row.test = mann_whitney_u(a, b);
  row.smallest_p = smallest_p_value(a.size(), b.size());
  if (!row.ratio.valid() || a.empty() || b.empty()) {
    row.verdict = Verdict::no_runs;
    return;
  }
  const double point = row.ratio.estimate.n > 0 ? row.ratio.estimate.point : row.ratio.value;
  const double factor = std::max(point, 1 / point);
  row.beyond_threshold = factor > 1 + options.threshold_pct / 100;
  row.noisy = row.ratio.straddles_one();
  // The test and the ratio's interval agree (the interval inverts the same rank test, Mann-Whitney unpaired,
  // signed-rank paired): a change needs both, and a ratio with no 95 % interval is too few runs to tell.
  const Estimate& e = row.ratio.estimate;
  const bool has_95 = e.interval && e.interval->at_95();
  const bool significant = row.test.p_value < options.alpha && (!has_95 || e.excludes(1.0));
  if (row.smallest_p >= options.alpha || (row.ratio.paired && !has_95)) row.verdict = Verdict::too_few_runs;
  else if (significant) row.verdict = row.beyond_threshold ? Verdict::changed : Verdict::within_threshold;
  else row.verdict = Verdict::no_change;
}

// Each metric either side's runs report, side by side.
void add_metric_rows(Comparison& c, const CompareRow& cell, const std::vector<RunRecord>& a, const std::vector<RunRecord>& b) {
  std::vector<std::string> names = metric_names(a);
  for (const auto& n : metric_names(b)) add_unique(names, n);
  for (const auto& name : names) {
    MetricCompareRow m{cell.experiment, cell.case_name, cell.key, name, cell.label_a, cell.label_b, {}, {}, 0, {}};
    const std::vector<double> va = metric_values(a, name), vb = metric_values(b, name);
    m.a = compute_stats(va);
    m.b = compute_stats(vb);
    if (m.a.n && m.b.n && m.a.median != 0) m.ratio = m.b.median / m.a.median;
    if (m.a.n && m.b.n) m.test = mann_whitney_u(va, vb);
    c.metric_rows.push_back(m);
  }
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::changed: return "changed";
    case Verdict::within_threshold: return "within_threshold";
    case Verdict::no_change: return "no_change";
    case Verdict::too_few_runs: return "too_few_runs";
    case Verdict::no_runs: return "no_runs";
  }
  return "no_runs";
}

int Comparison::count(Verdict v) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [v](const CompareRow& r) { return r.verdict == v; }));
}

int Comparison::changed() const { return count(Verdict::changed); }

int Comparison::beyond_threshold() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.beyond_threshold; }));
}

bool Comparison::different_sessions() const {
  if (sessions_a.empty() || sessions_b.empty()) return false;  // nothing says when they ran
  for (const auto& s : sessions_a)
    if (std::find(sessions_b.begin(), sessions_b.end(), s) != sessions_b.end()) return false;
  return true;
}

bool Comparison::has_gil_wait() const {
  return std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.gil_a || r.gil_b; });
}

int fail_on_change_status(const Comparison& c) { return c.changed() > 0 ? 1 : 0; }

std::string match_key(const RunRecord& run, const std::string& by) {
  if (by == "label") return run.interpreter;
  std::string v = run.python;
  const bool ft = run.free_threaded;
  if (!v.empty() && v.back() == 't') v.pop_back();
  if (by == "minor")
    if (auto parsed = Version::parse(v)) v = parsed->minor_str();
  return v + (ft ? "t" : "") + (ft && run.gil_forced ? "+gil" : "");
}

Comparison compare_runs(const std::vector<ResultsLine>& a, const std::vector<ResultsLine>& b,
                        const CompareOptions& options) {
  if (options.by != "label" && options.by != "python" && options.by != "minor")
    throw std::invalid_argument("--by takes label, python or minor, not '" + options.by + "'");
  if (!(options.alpha > 0 && options.alpha < 1))
    throw std::invalid_argument(fmt::format("--alpha takes a level between 0 and 1, not {:g}", options.alpha));
  Comparison c;
  c.options = options;
  c.machines_a = machines_of(a);
  c.machines_b = machines_of(b);
  c.sessions_a = sessions_of(a);
  c.sessions_b = sessions_of(b);
  using Key = std::tuple<std::string, std::string, std::string>;  // experiment, case, build key
  struct Side {
    std::vector<Key> order;
    std::map<Key, std::vector<RunRecord>> runs;
    std::map<Key, std::vector<std::string>> labels;
  };
  auto group = [&](const std::vector<ResultsLine>& lines) {
    Side s;
    std::vector<RunRecord> runs;
    for (const auto& line : lines)
      if (const auto* r = std::get_if<RunRecord>(&line); r && !r->warmup) runs.push_back(*r);
    // Runs of one case with different params are different cells, as in a report.
    for (auto& r : distinguish_params(std::move(runs))) {
      Key k{r.experiment, r.case_name, match_key(r, options.by)};
      if (!s.runs.count(k)) s.order.push_back(k);
      add_unique(s.labels[k], r.interpreter);
      s.runs[k].push_back(std::move(r));
    }
    return s;
  };
  Side sa = group(a), sb = group(b);
  auto name = [](const Key& k) { return std::get<0>(k) + ": " + std::get<1>(k) + " @ " + std::get<2>(k); };
  std::set<std::string> ambiguous;
  for (const auto& k : sa.order) {
    if (!sb.runs.count(k)) {
      c.only_a.push_back(name(k));
      continue;
    }
    const auto& la = sa.labels[k];
    const auto& lb = sb.labels[k];
    if (la.size() > 1 || lb.size() > 1) {
      // Several builds share the key on one side (e.g. two 3.11.2): pooling them would mix builds.
      ambiguous.insert(std::get<2>(k) + " (A: " + join(la, ", ") + "; B: " + join(lb, ", ") + ")");
      continue;
    }
    CompareRow row;
    row.experiment = std::get<0>(k);
    row.case_name = std::get<1>(k);
    row.key = std::get<2>(k);
    row.label_a = la.front();
    row.label_b = lb.front();
    const std::vector<double> wa = wall_seconds(sa.runs[k]), wb = wall_seconds(sb.runs[k]);
    row.wall_a = compute_stats(wa);
    row.wall_b = compute_stats(wb);
    // Two files' runs were not made side by side, whatever their repeat indices say: unpaired, the interval
    // of the same Mann-Whitney test that gives p.
    row.ratio = unpaired_wall_ratio(sb.runs[k], sa.runs[k]);
    judge(row, wa, wb, options);
    row.gil_a = median_gil_wait(sa.runs[k]);
    row.gil_b = median_gil_wait(sb.runs[k]);
    c.rows.push_back(row);
    add_metric_rows(c, row, sa.runs[k], sb.runs[k]);
  }
  for (const auto& k : sb.order)
    if (!sa.runs.count(k)) c.only_b.push_back(name(k));
  c.ambiguous.assign(ambiguous.begin(), ambiguous.end());
  return c;
}

namespace {
constexpr int kPairsFor95 = 6;  // report/interval: below 6 pairs no signed-rank interval reaches 95 %
}  // namespace

std::string verdict_text(const CompareRow& r, const CompareOptions& options) {
  switch (r.verdict) {
    case Verdict::changed: return r.noisy ? "! changed (some pairs disagree)" : "! changed";
    case Verdict::within_threshold: return fmt::format("significant, within {:g}%", options.threshold_pct);
    case Verdict::no_change: return "no significant change";
    case Verdict::too_few_runs: {
      const auto na = r.wall_a.n, nb = r.wall_b.n;
      if (r.ratio.paired)  // the signed-rank interval reaches 95 % from 6 pairs
        return fmt::format("too few runs to tell ({} pairs; {}+ needed)", r.ratio.estimate.n, kPairsFor95);
      const int needed = runs_needed_per_side(options.alpha);
      return na == nb ? fmt::format("too few runs to tell ({} a side; {}+ needed)", na, needed)
                      : fmt::format("too few runs to tell ({} and {}; {}+ a side needed)", na, nb, needed);
    }
    case Verdict::no_runs: return "no ok runs";
  }
  return "";
}

std::string format_p(const CompareRow& r) {
  if (r.verdict == Verdict::no_runs) return "-";
  if (r.test.p_value < 0.001) return "<0.001";
  return fmt::format("{:.3f}", r.test.p_value);
}

namespace {

std::string build_name(const CompareRow& r) {
  return r.label_a == r.label_b ? r.label_a : r.label_a + " → " + r.label_b;
}

std::string utc_time(std::int64_t unix_ns) {
  const std::time_t t = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string sessions_text(const std::vector<SessionStamp>& sessions) {
  std::vector<std::string> out;
  for (const auto& s : sessions)
    out.push_back((s.hostname.empty() ? "" : s.hostname + ", ") + "started " + utc_time(s.started_unix_ns));
  return join(out, "; ");
}

std::string header_lines(const Comparison& c, const std::string& bullet) {
  std::string out;
  auto side = [&](const char* name, const std::string& path, const std::vector<MachineRecord>& machines,
                  const std::vector<SessionStamp>& sessions) {
    std::vector<std::string> ms;
    for (const auto& m : machines) ms.push_back(machine_line(m));
    out += bullet + name + ": " + path + (ms.empty() ? "" : " — " + join(ms, "; "));
    if (sessions.size() == 1) out += " — session started " + utc_time(sessions.front().started_unix_ns);
    else if (sessions.size() > 1) out += fmt::format(" — {} sessions", sessions.size());
    out += "\n";
  };
  side("A", c.path_a, c.machines_a, c.sessions_a);
  side("B", c.path_b, c.machines_b, c.sessions_b);
  return out;
}

std::string explanation(const Comparison& c) {
  return fmt::format(
      "B / A of the wall time per cell (matched by {}): the two-sample Hodges-Lehmann ratio with its 95 % "
      "interval (Mann-Whitney, inverted), n the smaller side's runs; p: the Mann-Whitney U test of A's wall times "
      "against B's. A cell has changed (!) only when the factor is beyond {:g}%, p < {:g} and the interval "
      "excludes 1; {} runs a side are the fewest that can reach p < {:g}",
      c.options.by, c.options.threshold_pct, c.options.alpha, runs_needed_per_side(c.options.alpha), c.options.alpha);
}

std::string summary_line(const Comparison& c) {
  std::string out = fmt::format("{} cells compared, {} changed beyond {:g}% with p < {:g}", c.rows.size(), c.changed(),
                                c.options.threshold_pct, c.options.alpha);
  int unsure = 0;
  for (const auto& r : c.rows) unsure += r.beyond_threshold && !r.changed();
  if (unsure) out += fmt::format("; {} more beyond {:g}% but not significant", unsure, c.options.threshold_pct);
  if (const int few = c.count(Verdict::too_few_runs))
    out += fmt::format("; {} with too few runs to tell ({}+ a side needed)", few, runs_needed_per_side(c.options.alpha));
  return out;
}

// Two sessions' figures differ by the drift between them as well as by any change.
std::string session_note(const Comparison& c) {
  if (!c.different_sessions()) return "";
  std::string where;
  for (const auto& a : c.sessions_a)
    for (const auto& b : c.sessions_b)
      if (a.hostname != b.hostname) where = " on different machines (the figures compare the machines too)";
  return fmt::format(
      "A and B come from different sessions{} (A: {}; B: {}). Their figures include the drift between the "
      "sessions (a VM's speed drifts by as much as ±20 %), which neither the ratio nor the test can tell from a "
      "change. To measure a change, put both sides in one session, builds interleaved round by round (e.g. "
      "gilhost run X.toml -p 3.12 -p 3.13): within one session runs pair by round, measured side by side.",
      where, sessions_text(c.sessions_a), sessions_text(c.sessions_b));
}

std::string gil_share_text(const std::optional<double>& share) { return share ? percent_text(*share) : "-"; }

// The rows of a comparison, built once for the text and the Markdown; the GIL wait columns only where a
// side has thread states, the verdict always last.
Table comparison_table(const Comparison& c) {
  const bool gil = c.has_gil_wait();
  std::vector<std::string> titles{"experiment", "case", "build", "A wall", "B wall", "B / A", "p"};
  std::vector<Align> align{Align::left, Align::left, Align::left, Align::right, Align::right, Align::left, Align::right};
  if (gil) {
    titles.insert(titles.end(), {"A GIL", "B GIL", "GIL Δ"});
    align.insert(align.end(), {Align::right, Align::right, Align::right});
  }
  titles.push_back("verdict");
  Table t = Table::with_columns(titles, align);
  for (const auto& r : c.rows) {
    std::vector<std::string> row{r.experiment, r.case_name, build_name(r), format_wall(r.wall_a), format_wall(r.wall_b),
                                 format_change(r.ratio), format_p(r)};
    if (gil)
      row.insert(row.end(), {gil_share_text(r.gil_a), gil_share_text(r.gil_b),
                             r.gil_a && r.gil_b ? points_change_text(*r.gil_a, *r.gil_b) : "-"});
    row.push_back(verdict_text(r, c.options));
    t.add_row(row);
  }
  return t;
}

const char* kGilCaption =
    "A GIL, B GIL: the share of the Python threads' time spent waiting for the GIL (thread states, median over the "
    "runs); GIL Δ: B's against A's, in percentage points";

const char* kTerseGilCaption =
    "GIL wait: the share of the Python threads' time spent waiting for the GIL (thread states, median over the runs)";

const char* kMetricsCaption =
    "metrics (the scripts' own figures: median ± MAD of the ok runs; B / A of the medians; p: Mann-Whitney U). "
    "No verdict: gilhost cannot tell whether more is better";

Table metrics_comparison_table(const Comparison& c) {
  Table t = Table::with_columns({"experiment", "case", "build", "metric", "A", "B", "B / A", "p"},
                                {Align::left, Align::left, Align::left, Align::left, Align::right, Align::right,
                                 Align::right, Align::right});
  t.columns.back().dropped_at(4);  // p
  for (const auto& m : c.metric_rows) {
    const std::string p = !m.a.n || !m.b.n ? "-" : m.test.p_value < 0.001 ? "<0.001" : fmt::format("{:.3f}", m.test.p_value);
    t.add_row({m.experiment, m.case_name, m.label_a == m.label_b ? m.label_a : m.label_a + " → " + m.label_b, m.metric,
               format_metric(m.a), format_metric(m.b), m.ratio > 0 ? fmt::format("{:.3f}x", m.ratio) : "-", p});
  }
  return t;
}

}  // namespace

namespace {

// The verdict in a few words, for a table that must fit a terminal; the summary line below it says the rest
// (how many runs a side are needed).
std::string verdict_short(const CompareRow& r, const CompareOptions& options) {
  switch (r.verdict) {
    case Verdict::changed: return r.noisy ? "! changed (noisy)" : "! changed";
    case Verdict::within_threshold: return fmt::format("within {:g}%", options.threshold_pct);
    case Verdict::no_change: return "no change";
    case Verdict::too_few_runs: return "too few runs";
    case Verdict::no_runs: return "no ok runs";
  }
  return "";
}

// Every row of `t` holds the same text in `column`: that text, else "".
std::string shared_cell(const Table& t, std::size_t column) {
  if (t.rows.empty()) return "";
  for (const auto& row : t.rows)
    if (row[column] != t.rows.front()[column]) return "";
  return t.rows.front()[column];
}

// "190 ms → 219 ms": the two medians, the spread left to --wide.
std::string walls_text(const CompareRow& r) {
  auto median = [](const Stats& w) { return w.n ? format_seconds(w.median) : std::string("-"); };
  return median(r.wall_a) + " → " + median(r.wall_b);
}

// The comparison table in a terminal's words: A's and B's walls in one column, as their GIL wait shares,
// "no diff." for "no measurable difference" (a legend line says it), the verdict short (the summary line
// says the rest).
Table terse_comparison_table(const Comparison& c) {
  const bool gil = c.has_gil_wait();
  const Align R = Align::right;
  Table t;
  t.columns = {Column("experiment"), Column("case"), Column("build"), Column("wall A → B", R), Column("B / A").wrapped(), Column("p", R)};
  t.columns[3].dropped_at(3);
  t.columns[5].dropped_at(5);
  if (gil) t.columns.push_back(Column("GIL wait A → B", R).dropped_at(4));
  t.columns.push_back(Column("verdict").wrapped());
  const std::string long_form = "no measurable difference";
  for (const auto& r : c.rows) {
    std::string ratio = format_change(r.ratio);
    if (starts_with(ratio, long_form)) ratio = "no diff." + ratio.substr(long_form.size());
    std::vector<std::string> row{r.experiment, r.case_name, build_name(r), walls_text(r), ratio, format_p(r)};
    if (gil) row.push_back(gil_share_text(r.gil_a) + " → " + gil_share_text(r.gil_b));
    row.push_back(verdict_short(r, c.options));
    t.add_row(row);
  }
  return t;
}

// The terminal's view of a compare table: one experiment said once above it rather than in every row,
// columns left out (highest drop first) and names cut to fit `width`, and a line naming what was left out.
// width 0: the whole table.
std::string fitted_table_text(Table t, std::size_t width) {
  if (width == 0) return render_text_table(t);
  std::string out;
  if (const std::string experiment = shared_cell(t, 0); !experiment.empty()) {
    out += wrap_text("experiment: " + experiment, width) + "\n";
    t.columns[0].in_terminal = false;
  }
  const Table fitted = fit_table(t, width);
  out += render_text_table(fitted);
  std::vector<std::string> left_out;
  for (const auto& col : t.columns) {
    const bool kept = std::any_of(fitted.columns.begin(), fitted.columns.end(), [&](const Column& f) { return f.title == col.title; });
    if (col.in_terminal && !kept) left_out.push_back(col.title);
  }
  if (!left_out.empty())
    out += wrap_text("(left out to fit " + std::to_string(width) + " columns: " + join(left_out, ", ") + "; --wide shows them)", width) + "\n";
  return out;
}

}  // namespace

std::string render_comparison_text(const Comparison& c, std::size_t width) {
  std::string out = wrap_text(header_lines(c, ""), width);
  out += wrap_text(explanation(c), width) + "\n\n";
  if (width == 0) out += render_text_table(comparison_table(c));
  else {
    const Table terse = terse_comparison_table(c);
    out += fitted_table_text(terse, width);
    if (std::any_of(terse.rows.begin(), terse.rows.end(), [](const auto& row) { return starts_with(row[4], "no diff."); }))
      out += wrap_text("no diff.: no measurable difference, the ratio's 95 % interval holds 1", width) + "\n";
  }
  if (c.has_gil_wait()) out += wrap_text(width == 0 ? kGilCaption : kTerseGilCaption, width) + "\n";
  out += "\n" + wrap_text(summary_line(c), width) + "\n";
  for (const auto& r : c.rows)
    if (r.changed())
      out += wrap_text(fmt::format("  ! {}: {} @ {}: {} (p {})", r.experiment, r.case_name, build_name(r), format_change(r.ratio),
                                   format_p(r)), width, 4) + "\n";
  if (!c.metric_rows.empty())
    out += "\n" + wrap_text(kMetricsCaption, width) + "\n" + fitted_table_text(metrics_comparison_table(c), width);
  if (!c.only_a.empty()) out += wrap_text("only in A: " + join(c.only_a, ", "), width) + "\n";
  if (!c.only_b.empty()) out += wrap_text("only in B: " + join(c.only_b, ", "), width) + "\n";
  if (!c.ambiguous.empty())
    out += wrap_text("not compared, several builds share the key (use --by label): " + join(c.ambiguous, "; "), width) + "\n";
  if (const std::string note = session_note(c); !note.empty()) out += "\n" + wrap_text("note: " + note, width) + "\n";
  return out;
}

std::string render_comparison_markdown(const Comparison& c) {
  std::string out = "## gilhost compare\n\n" + header_lines(c, "- ") + "\n" + explanation(c) + ".\n\n";
  const Table t = comparison_table(c);
  std::string header = "|", rule = "|";
  for (const auto& col : t.columns) {
    header += col.title.empty() ? " |" : " " + col.title + " |";
    rule += col.align == Align::right ? "---:|" : "---|";
  }
  out += header + "\n" + rule + "\n";
  for (std::size_t n = 0; n < t.rows.size(); ++n) {
    std::string line = "|";
    for (std::size_t k = 0; k < t.rows[n].size(); ++k) {
      std::string cell = md_escape(t.rows[n][k]);
      if (k + 1 == t.rows[n].size() && c.rows[n].changed()) cell = "**" + cell + "**";  // the verdict
      line += " " + cell + " |";
    }
    out += line + "\n";
  }
  if (c.has_gil_wait()) out += "\n" + std::string(kGilCaption) + ".\n";
  out += "\n" + summary_line(c) + ".\n";
  if (!c.metric_rows.empty()) {
    const Table m = metrics_comparison_table(c);
    out += "\n" + std::string(kMetricsCaption) + ".\n\n|";
    for (const auto& col : m.columns) out += " " + col.title + " |";
    out += "\n|";
    for (const auto& col : m.columns) out += col.align == Align::right ? "---:|" : "---|";
    out += "\n";
    for (const auto& r : m.rows) {
      out += "|";
      for (const auto& cell : r) out += " " + md_escape(cell) + " |";
      out += "\n";
    }
  }
  if (!c.only_a.empty()) out += "\nOnly in A: " + md_escape(join(c.only_a, ", ")) + "\n";
  if (!c.only_b.empty()) out += "\nOnly in B: " + md_escape(join(c.only_b, ", ")) + "\n";
  if (!c.ambiguous.empty()) out += "\nNot compared, several builds share the key: " + md_escape(join(c.ambiguous, "; ")) + "\n";
  if (const std::string note = session_note(c); !note.empty()) out += "\n> **Note:** " + md_escape(note) + "\n";
  return out;
}

std::string comparison_session_note(const Comparison& c) { return session_note(c); }

}  // namespace gilhost
