#include "report/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include "discover/selector.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace gilhost {

namespace {

std::string str_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string meta_experiment_name(const nlohmann::json& meta) {
  const auto it = meta.find("experiment");
  return it != meta.end() && it->is_object() ? str_of(*it, "name") : "";
}

std::string meta_host(const nlohmann::json& meta) {
  const auto it = meta.find("machine");
  return it != meta.end() && it->is_object() ? str_of(*it, "hostname") : "";
}

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

void compute_vs_baseline(Section& s, const std::string& selector) {
  s.baseline_python = selector;
  const auto by_host = resolve_baseline(s, selector);
  if (by_host.empty()) {
    s.notes.push_back("no build of " + s.experiment + " matches --baseline-python " + selector);
    return;
  }
  for (const auto& b : s.builds) {
    auto it = by_host.find(b.host);
    if (it != by_host.end()) s.baseline_of[b.label] = it->second;
    else if (by_host.size() == 1) s.baseline_of[b.label] = by_host.begin()->second;  // the only one there is
  }
  for (const auto& [key, cell] : s.summary.cells) {
    auto base = s.baseline_of.find(key.second);
    if (base == s.baseline_of.end()) continue;
    const Cell* b = s.summary.cell(key.first, base->second);
    if (!b) continue;
    RatioStat r = wall_ratio(cell.runs, b->runs);
    if (r.valid()) s.vs_baseline[key] = r;
  }
}

}  // namespace

const BuildInfo* Section::build(const std::string& label) const {
  for (const auto& b : builds)
    if (b.label == label) return &b;
  return nullptr;
}

std::string Section::profile() const { return str_of(experiment_meta, "profile"); }

const nlohmann::json* Section::median_run(const std::string& case_name, const std::string& interpreter) const {
  const Cell* c = summary.cell(case_name, interpreter);
  if (!c || c->runs.empty()) return nullptr;
  std::vector<const nlohmann::json*> runs;
  for (const auto& r : c->runs)
    if (r.value("status", "") == "ok") runs.push_back(&r);
  if (runs.empty())
    for (const auto& r : c->runs) runs.push_back(&r);
  std::sort(runs.begin(), runs.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return a->value("wall_ns", std::int64_t{0}) < b->value("wall_ns", std::int64_t{0});
  });
  return runs[(runs.size() - 1) / 2];
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
  for (const auto& j : merged.lines) {
    const std::string type = j.value("type", "");
    if (type == "meta") {
      Section& s = section(meta_experiment_name(j));
      if (s.metas.empty() && j.contains("experiment") && j["experiment"].is_object()) s.experiment_meta = j["experiment"];
      s.metas.push_back(j);
      add_unique(s.sources, str_of(j, "source"));
    } else if (type == "run" || type == "skip") {
      Section& s = section(j.value("experiment", ""));
      s.records.push_back(j);
      add_unique(s.sources, str_of(j, "source"));
    }
  }

  for (const auto& name : order) {
    Section& s = sections[name];
    if (s.records.empty() && s.metas.empty()) continue;
    const nlohmann::json& ex = s.experiment_meta;
    std::map<std::string, std::string> show;
    for (const auto& c : ex.value("cases", nlohmann::json::array()))
      if (c.is_object() && !str_of(c, "show").empty()) show[str_of(c, "name")] = str_of(c, "show");
    s.summary = summarize(s.records, str_of(ex, "baseline"), show);
    if (s.summary.experiment.empty()) s.summary.experiment = name;

    std::set<std::string> hosts;
    for (const auto& m : s.metas)
      if (m.contains("machine") && m["machine"].is_object() && hosts.insert(meta_host(m)).second)
        s.machines.push_back(m["machine"]);

    if (s.metas.size() > 1) {
      // Sessions merged (one per CI job, one per machine): builds by host, then version, whatever the
      // order the files were given in.
      std::map<std::string, std::size_t> host_rank;
      std::map<std::string, std::tuple<std::size_t, long, bool, std::string>> key;
      for (const auto& r : s.records) {
        if (r.value("type", "") != "run") continue;
        const std::string label = str_of(r, "interpreter");
        if (key.count(label)) continue;
        const std::string host = str_of(r, "host");
        host_rank.emplace(host, host_rank.size());
        auto v = Version::parse(str_of(r, "python"));
        key[label] = {host_rank[host], v ? v->key() : 0L, r.value("free_threaded", false), label};
      }
      std::stable_sort(s.summary.interpreters.begin(), s.summary.interpreters.end(),
                       [&](const std::string& a, const std::string& b) { return key[a] < key[b]; });
    }

    std::map<std::string, BuildInfo> known;
    for (const auto& m : s.metas)
      for (const auto& i : m.value("interpreters", nlohmann::json::array())) {
        if (!i.is_object()) continue;
        BuildInfo b;
        b.label = str_of(i, "label");
        b.original_label = i.contains("original_label") ? str_of(i, "original_label") : b.label;
        b.host = meta_host(m);
        b.version = str_of(i, "version");
        b.free_threaded = i.value("free_threaded", false);
        b.gil_forced = i.value("gil_forced", false);
        b.mode = str_of(i, "mode");
        b.compiler = str_of(i, "compiler");
        b.source = str_of(i, "source");
        b.executable = str_of(i, "executable");
        b.libpython = str_of(i, "libpython");
        b.build_flags = str_of(i, "build_flags");
        known.emplace(b.label, b);
      }
    for (const auto& label : s.summary.interpreters) {
      auto it = known.find(label);
      if (it != known.end()) {
        s.builds.push_back(it->second);
        continue;
      }
      BuildInfo b;  // no meta for it (a file cut before its header): what its runs say
      b.label = b.original_label = label;
      for (const auto& r : s.records)
        if (r.value("type", "") == "run" && str_of(r, "interpreter") == label) {
          b.host = str_of(r, "host");
          b.version = str_of(r, "python");
          b.free_threaded = r.value("free_threaded", false);
          b.gil_forced = r.value("gil_forced", false);
          b.mode = str_of(r, "mode");
          b.executable = str_of(r, "executable");
          if (r.contains("original_interpreter")) b.original_label = str_of(r, "original_interpreter");
          break;
        }
      s.builds.push_back(b);
    }

    s.context.description = str_of(ex, "description");
    s.context.machine = s.metas.empty() ? nlohmann::json() : s.metas.front().value("machine", nlohmann::json());
    s.context.article = ex.value("article", nlohmann::json::object());
    s.context.results_path = join(s.sources, ", ");
    s.context.details = options.details;
    if (!options.baseline_python.empty()) compute_vs_baseline(s, options.baseline_python);
    model.sections.push_back(std::move(s));
  }
  return model;
}

std::string verdict_mark(const Cell& c) {
  if (c.runs.empty()) return "";
  return c.expectations_ok() ? "✓" : "✗";
}

std::string vs_baseline_text(const Section& s, const std::string& case_name, const std::string& interpreter) {
  auto base = s.baseline_of.find(interpreter);
  if (base == s.baseline_of.end()) return "-";
  if (base->second == interpreter) return "base";
  auto it = s.vs_baseline.find({case_name, interpreter});
  return it == s.vs_baseline.end() ? "-" : format_ratio(it->second);
}

std::string machine_summary(const nlohmann::json& m) {
  if (!m.is_object()) return "";
  std::string out = m.value("cpu_model", "unknown CPU");
  out += fmt::format(" · {} cores", m.value("cores", 0));
  if (m.value("online_cpus", 0) && m.value("online_cpus", 0) != m.value("cores", 0))
    out += fmt::format(" (of {} online)", m.value("online_cpus", 0));
  if (!m.value("kernel", "").empty()) out += " · " + m.value("kernel", "");
  if (!m.value("arch", "").empty()) out += " · " + m.value("arch", "");
  if (m.value("memory_bytes", 0.0) > 0) out += " · " + format_bytes(m.value("memory_bytes", 0.0)) + " RAM";
  return out;
}

std::vector<SkipGroup> group_skips(const std::vector<nlohmann::json>& skips) {
  std::vector<SkipGroup> out;
  for (const auto& k : skips) {
    const std::string reason = k.value("reason", "");
    auto it = std::find_if(out.begin(), out.end(), [&](const SkipGroup& g) { return g.reason == reason; });
    if (it == out.end()) {
      out.push_back({reason, {}, {}});
      it = out.end() - 1;
    }
    const std::string c = k.value("case", "");
    add_unique(it->cases, c.substr(0, c.find('[')));
    const std::string who = k.value("label", k.value("interpreter", ""));
    add_unique(it->builds, who.empty() ? k.value("selector", "") : who);
  }
  return out;
}

std::string render_text(const ReportModel& model) {
  std::string out;
  for (std::size_t n = 0; n < model.sections.size(); ++n) {
    const Section& s = model.sections[n];
    if (n) out += "\n";
    out += render_report(s.summary, s.context);
    if (s.multi_host()) {
      out += "machines:\n";
      for (const auto& m : s.machines) out += "  " + m.value("hostname", "?") + ": " + machine_summary(m) + "\n";
    }
    if (!s.baseline_python.empty() && !s.baseline_of.empty()) {
      std::vector<std::string> header{"vs " + s.baseline_python};
      for (const auto& i : s.summary.interpreters) header.push_back(i);
      TextTable t(header);
      for (const auto& c : s.summary.cases) {
        std::vector<std::string> row{c};
        for (const auto& i : s.summary.interpreters) row.push_back(vs_baseline_text(s, c, i));
        t.add_row(row);
      }
      out += "\n" + t.render();
      out += "vs " + s.baseline_python + ": wall / wall of the " + s.baseline_python +
             " build on the same machine, same case, paired by repeat (median ± MAD)\n";
    }
    for (const auto& note : s.notes) out += "note: " + note + "\n";
  }
  return out;
}

}  // namespace gilhost
