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

bool measured_ok(const nlohmann::json& r) {
  return r.value("type", "") == "run" && !r.value("warmup", false) && r.value("status", "") == "ok" &&
         r.value("wall_ns", std::int64_t{0}) > 0;
}

double wall_of(const nlohmann::json& r) { return static_cast<double>(r.value("wall_ns", std::int64_t{0})); }

std::string session_of(const nlohmann::json& r) {
  return r.value("source", "") + "#" + std::to_string(r.value("session", 0));
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else out += ch;
  }
  return out;
}

std::string machine_line(const nlohmann::json& m) {
  return fmt::format("{}: {}, {} cores, {}", m.value("hostname", "?"), m.value("cpu_model", "unknown CPU"),
                     m.value("cores", 0), m.value("kernel", ""));
}

std::vector<nlohmann::json> machines_of(const std::vector<nlohmann::json>& lines) {
  std::vector<nlohmann::json> out;
  std::set<std::string> seen;
  for (const auto& j : lines)
    if (j.value("type", "") == "meta" && j.contains("machine") && j["machine"].is_object())
      if (seen.insert(j["machine"].value("hostname", "")).second) out.push_back(j["machine"]);
  return out;
}

Stats wall_stats(const std::vector<nlohmann::json>& runs) {
  std::vector<double> w;
  for (const auto& r : runs)
    if (measured_ok(r)) w.push_back(wall_of(r) / 1e9);
  return compute_stats(w);
}

}  // namespace

nlohmann::json RatioStat::to_json() const {
  if (!valid()) return nullptr;
  nlohmann::json j = {{"value", value}, {"min", lo}, {"max", hi}, {"pairs", pairs}, {"paired", paired}};
  if (paired) j["mad"] = mad;
  return j;
}

RatioStat wall_ratio(const std::vector<nlohmann::json>& num_runs, const std::vector<nlohmann::json>& den_runs) {
  std::vector<const nlohmann::json*> num, den;
  for (const auto& r : num_runs)
    if (measured_ok(r)) num.push_back(&r);
  for (const auto& r : den_runs)
    if (measured_ok(r)) den.push_back(&r);
  RatioStat out;
  if (num.empty() || den.empty()) return out;

  auto finish = [&](const std::vector<double>& ratios) {
    Stats s = compute_stats(ratios);
    std::vector<double> inverse;
    for (double r : ratios) inverse.push_back(1 / r);
    out.value = s.median;
    out.lo = s.min;
    out.hi = s.max;
    out.mad = s.mad;
    out.mad_inverse = compute_stats(inverse).mad;
    out.pairs = static_cast<int>(ratios.size());
    out.paired = true;
    return out;
  };
  // Same session, same repeat index: runs made side by side.
  std::map<std::pair<std::string, int>, double> by_session;
  std::map<int, double> by_repeat;  // first of each repeat index
  for (const auto* r : den) {
    by_session.emplace(std::make_pair(session_of(*r), r->value("repeat", 0)), wall_of(*r));
    by_repeat.emplace(r->value("repeat", 0), wall_of(*r));
  }
  std::vector<double> ratios;
  for (const auto* r : num) {
    auto it = by_session.find({session_of(*r), r->value("repeat", 0)});
    if (it != by_session.end()) ratios.push_back(wall_of(*r) / it->second);
  }
  if (!ratios.empty()) return finish(ratios);
  for (const auto* r : num) {
    auto it = by_repeat.find(r->value("repeat", 0));
    if (it != by_repeat.end()) ratios.push_back(wall_of(*r) / it->second);
  }
  if (!ratios.empty()) return finish(ratios);

  // Nothing pairs: the ratio of the medians, bounded by the ratios of every run with every run.
  std::vector<double> a, b;
  for (const auto* r : num) a.push_back(wall_of(*r));
  for (const auto* r : den) b.push_back(wall_of(*r));
  out.value = median_of(a) / median_of(b);
  out.lo = *std::min_element(a.begin(), a.end()) / *std::max_element(b.begin(), b.end());
  out.hi = *std::max_element(a.begin(), a.end()) / *std::min_element(b.begin(), b.end());
  out.pairs = static_cast<int>(a.size() * b.size());
  out.paired = false;
  return out;
}

std::string format_ratio(const RatioStat& r) {
  if (!r.valid()) return "-";
  if (!r.paired) return fmt::format("{:.2f}x ({:.2f}–{:.2f})", r.value, r.lo, r.hi);
  if (r.pairs == 1) return fmt::format("{:.2f}x", r.value);
  return fmt::format("{:.2f} ± {:.2f}x", r.value, r.mad);
}

std::string format_change(const RatioStat& r) {
  if (!r.valid()) return "-";
  const bool faster = fmt::format("{:.2f}", r.value) != "1.00" && r.value < 1;
  const double factor = faster ? 1 / r.value : r.value;
  const char* word = fmt::format("{:.2f}", r.value) == "1.00" ? "(same)" : faster ? "faster" : "slower";
  if (!r.paired)  // the range of B/A, as a factor of the same direction
    return faster ? fmt::format("{:.2f} x {} ({:.2f}–{:.2f})", factor, word, 1 / r.hi, 1 / r.lo)
                  : fmt::format("{:.2f} x {} ({:.2f}–{:.2f})", factor, word, r.lo, r.hi);
  if (r.pairs == 1) return fmt::format("{:.2f} x {}", factor, word);
  return fmt::format("{:.2f} ± {:.2f} x {}", factor, faster ? r.mad_inverse : r.mad, word);
}

int Comparison::flagged() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) { return r.flagged; }));
}

std::string match_key(const nlohmann::json& run, const std::string& by) {
  if (by == "label") return run.value("interpreter", "");
  std::string v = run.value("python", "");
  const bool ft = run.value("free_threaded", false);
  if (!v.empty() && v.back() == 't') v.pop_back();
  if (by == "minor")
    if (auto parsed = Version::parse(v)) v = parsed->minor_str();
  return v + (ft ? "t" : "") + (ft && run.value("gil_forced", false) ? "+gil" : "");
}

Comparison compare_runs(const std::vector<nlohmann::json>& a, const std::vector<nlohmann::json>& b,
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
    std::map<Key, std::vector<nlohmann::json>> runs;
    std::map<Key, std::vector<std::string>> labels;
  };
  auto group = [&](const std::vector<nlohmann::json>& lines) {
    Side s;
    for (const auto& r : lines) {
      if (r.value("type", "") != "run" || r.value("warmup", false)) continue;
      Key k{r.value("experiment", ""), r.value("case", ""), match_key(r, options.by)};
      if (!s.runs.count(k)) s.order.push_back(k);
      s.runs[k].push_back(r);
      auto& l = s.labels[k];
      const std::string label = r.value("interpreter", "");
      if (std::find(l.begin(), l.end(), label) == l.end()) l.push_back(label);
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
  auto side = [&](const char* name, const std::string& path, const std::vector<nlohmann::json>& machines) {
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

std::string render_comparison_text(const Comparison& c) {
  std::string out = header_lines(c, "");
  out += explanation(c) + "\n\n";
  TextTable t({"experiment", "case", "build", "A wall", "B wall", "B / A", ""}, {false, false, false, true, true, false, false});
  for (const auto& r : c.rows)
    t.add_row({r.experiment, r.case_name, build_name(r), format_wall(r.wall_a), format_wall(r.wall_b), format_change(r.ratio),
               flag_text(r)});
  out += t.render();
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
  out += "| experiment | case | build | A wall | B wall | B / A | |\n|---|---|---|---:|---:|---|---|\n";
  for (const auto& r : c.rows)
    out += "| " + md_escape(r.experiment) + " | " + md_escape(r.case_name) + " | " + md_escape(build_name(r)) + " | " +
           format_wall(r.wall_a) + " | " + format_wall(r.wall_b) + " | " + format_change(r.ratio) + " | " +
           (r.flagged ? "**" + md_escape(flag_text(r)) + "**" : md_escape(flag_text(r))) + " |\n";
  out += "\n" + summary_line(c) + ".\n";
  if (!c.only_a.empty()) out += "\nOnly in A: " + md_escape(join(c.only_a, ", ")) + "\n";
  if (!c.only_b.empty()) out += "\nOnly in B: " + md_escape(join(c.only_b, ", ")) + "\n";
  if (!c.ambiguous.empty()) out += "\nNot compared, several builds share the key: " + md_escape(join(c.ambiguous, "; ")) + "\n";
  return out;
}

nlohmann::json comparison_json(const Comparison& c) {
  auto stats = [](const Stats& s) {
    return nlohmann::json{{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"mad", s.mad}};
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"experiment", r.experiment}, {"case", r.case_name}, {"key", r.key}, {"label_a", r.label_a},
                    {"label_b", r.label_b}, {"wall_s_a", stats(r.wall_a)}, {"wall_s_b", stats(r.wall_b)},
                    {"ratio_b_over_a", r.ratio.to_json()}, {"change", format_change(r.ratio)}, {"flagged", r.flagged},
                    {"noisy", r.noisy}});
  return {{"a", c.path_a}, {"b", c.path_b}, {"machines_a", c.machines_a}, {"machines_b", c.machines_b},
          {"by", c.options.by}, {"threshold_pct", c.options.threshold_pct}, {"rows", rows}, {"flagged", c.flagged()},
          {"only_in_a", c.only_a}, {"only_in_b", c.only_b}, {"ambiguous", c.ambiguous}};
}

}  // namespace gilhost
