#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "report/table.hpp"
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

Stats wall_stats(const std::vector<RunRecord>& runs) {
  std::vector<double> w;
  for (const auto& r : runs)
    if (r.measured_ok()) w.push_back(static_cast<double>(r.wall_ns) / 1e9);
  return compute_stats(w);
}

}  // namespace

int Comparison::flagged() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.flagged; }));
}

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
  Comparison c;
  c.options = options;
  c.machines_a = machines_of(a);
  c.machines_b = machines_of(b);
  using Key = std::tuple<std::string, std::string, std::string>;  // experiment, case, build key
  struct Side {
    std::vector<Key> order;
    std::map<Key, std::vector<RunRecord>> runs;
    std::map<Key, std::vector<std::string>> labels;
  };
  auto group = [&](const std::vector<ResultsLine>& lines) {
    Side s;
    for (const auto& line : lines) {
      const auto* r = std::get_if<RunRecord>(&line);
      if (!r || r->warmup) continue;
      Key k{r->experiment, r->case_name, match_key(*r, options.by)};
      if (!s.runs.count(k)) s.order.push_back(k);
      s.runs[k].push_back(*r);
      add_unique(s.labels[k], r->interpreter);
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
    row.wall_a = wall_stats(sa.runs[k]);
    row.wall_b = wall_stats(sb.runs[k]);
    row.ratio = wall_ratio(sb.runs[k], sa.runs[k]);
    if (row.ratio.valid()) {
      const double factor = std::max(row.ratio.value, 1 / row.ratio.value);
      row.flagged = factor > 1 + options.threshold_pct / 100;
      row.noisy = row.ratio.straddles_one();
    }
    c.rows.push_back(row);
  }
  for (const auto& k : sb.order)
    if (!sa.runs.count(k)) c.only_b.push_back(name(k));
  c.ambiguous.assign(ambiguous.begin(), ambiguous.end());
  return c;
}

namespace {

std::string build_name(const CompareRow& r) {
  return r.label_a == r.label_b ? r.label_a : r.label_a + " → " + r.label_b;
}

std::string flag_text(const CompareRow& r) {
  if (!r.ratio.valid()) return "no ok runs";
  if (!r.flagged) return "";
  return r.noisy ? "! (some pairs disagree)" : "!";
}

std::string header_lines(const Comparison& c, const std::string& bullet) {
  std::string out;
  auto side = [&](const char* name, const std::string& path, const std::vector<MachineRecord>& machines) {
    std::vector<std::string> ms;
    for (const auto& m : machines) ms.push_back(machine_line(m));
    out += bullet + name + ": " + path + (ms.empty() ? "" : " — " + join(ms, "; ")) + "\n";
  };
  side("A", c.path_a, c.machines_a);
  side("B", c.path_b, c.machines_b);
  return out;
}

std::string explanation(const Comparison& c) {
  return fmt::format(
      "B / A of the wall time per cell (matched by {}): the median of the ratios of runs paired by repeat index "
      "± their MAD (the ratio of the medians where none pair); ! marks changes beyond {:g}%",
      c.options.by, c.options.threshold_pct);
}

std::string summary_line(const Comparison& c) {
  return fmt::format("{} cells compared, {} changed beyond {:g}%", c.rows.size(), c.flagged(), c.options.threshold_pct);
}

}  // namespace

namespace {

// The rows of a comparison, built once for the text and the Markdown.
Table comparison_table(const Comparison& c) {
  Table t = Table::with_columns({"experiment", "case", "build", "A wall", "B wall", "B / A", ""},
                                {Align::left, Align::left, Align::left, Align::right, Align::right});
  for (const auto& r : c.rows)
    t.add_row({r.experiment, r.case_name, build_name(r), format_wall(r.wall_a), format_wall(r.wall_b), format_change(r.ratio),
               flag_text(r)});
  return t;
}

}  // namespace

std::string render_comparison_text(const Comparison& c) {
  std::string out = header_lines(c, "");
  out += explanation(c) + "\n\n";
  out += render_text_table(comparison_table(c));
  out += "\n" + summary_line(c) + "\n";
  for (const auto& r : c.rows)
    if (r.flagged)
      out += fmt::format("  ! {}: {} @ {}: {}\n", r.experiment, r.case_name, build_name(r), format_change(r.ratio));
  if (!c.only_a.empty()) out += "only in A: " + join(c.only_a, ", ") + "\n";
  if (!c.only_b.empty()) out += "only in B: " + join(c.only_b, ", ") + "\n";
  if (!c.ambiguous.empty())
    out += "not compared, several builds share the key (use --by label): " + join(c.ambiguous, "; ") + "\n";
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
      if (k + 1 == t.rows[n].size() && c.rows[n].flagged) cell = "**" + cell + "**";  // the flag
      line += " " + cell + " |";
    }
    out += line + "\n";
  }
  out += "\n" + summary_line(c) + ".\n";
  if (!c.only_a.empty()) out += "\nOnly in A: " + md_escape(join(c.only_a, ", ")) + "\n";
  if (!c.only_b.empty()) out += "\nOnly in B: " + md_escape(join(c.only_b, ", ")) + "\n";
  if (!c.ambiguous.empty()) out += "\nNot compared, several builds share the key: " + md_escape(join(c.ambiguous, "; ")) + "\n";
  return out;
}

}  // namespace gilhost
