#include "report/merge.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "run/results_file.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::string hostname_of_meta(const nlohmann::json& meta) {
  const auto it = meta.find("machine");
  if (it == meta.end() || !it->is_object()) return "";
  const auto h = it->find("hostname");
  return h != it->end() && h->is_string() ? h->get<std::string>() : "";
}

std::string str_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// The host a line belongs to: a record's tag, or a meta's machine.
std::string line_host(const nlohmann::json& j) {
  if (j.value("type", "") == "meta") return hostname_of_meta(j);
  return str_field(j, "host");
}

bool is_meta(const nlohmann::json& j) { return j.value("type", "") == "meta"; }

}  // namespace

LoadedResults load_results_ordered(const std::string& path) {
  LoadedResults out;
  out.path = path;
  const std::vector<std::string> lines = split(read_file(path), '\n');
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (trim(lines[n]).empty()) continue;
    auto j = nlohmann::json::parse(lines[n], nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++out.malformed_lines;  // e.g. the last line, cut by a crash
      continue;
    }
    // A record we would misread (a newer format, a run without its fields) stops the report: rows of
    // zeros would look like measurements.
    if (const std::string why = results_line_problem(j); !why.empty())
      throw std::runtime_error(path + ":" + std::to_string(n + 1) + ": " + why);
    out.lines.push_back(std::move(j));
  }
  if (out.lines.empty())
    throw std::runtime_error(path + ": no gilhost record in it" +
                             (out.malformed_lines ? " (" + std::to_string(out.malformed_lines) +
                                                        " lines, none of them JSON: not a results file?)"
                                                  : " (the file is empty)"));
  return out;
}

std::string strip_host_tag(const std::string& label, const std::string& host) {
  const std::string suffix = "@" + host;
  if (!host.empty() && ends_with(label, suffix) && label.size() > suffix.size())
    return label.substr(0, label.size() - suffix.size());
  return label;
}

MergedResults merge_results(std::vector<LoadedResults> inputs, const MergeOptions& options) {
  if (options.tag != "auto" && options.tag != "host" && options.tag != "file" && options.tag != "none")
    throw std::invalid_argument("unknown label tag '" + options.tag + "' (auto, host, file or none)");
  MergedResults m;
  std::vector<std::string> stems;  // per line: the stem of the file it first came from
  for (auto& in : inputs) {
    m.sources.push_back(in.path);
    m.malformed_lines += in.malformed_lines;
    std::string host;
    int session = -1;
    for (auto& j : in.lines) {
      if (is_meta(j)) {
        ++session;
        host = hostname_of_meta(j);
        if (!j.contains("source")) j["source"] = in.path;
        if (!j.contains("session")) j["session"] = session;
      } else {
        // A merged file merged again keeps the tags it has.
        if (!j.contains("host")) j["host"] = host;
        if (!j.contains("source")) j["source"] = in.path;
        if (!j.contains("session")) j["session"] = std::max(session, 0);
      }
      stems.push_back(std::filesystem::path(str_field(j, "source")).stem().string());
      m.lines.push_back(std::move(j));
    }
  }
  if (options.tag == "none") return m;

  // Which hosts each label ran (or was skipped) on.
  std::map<std::string, std::set<std::string>> hosts_of;
  for (const auto& j : m.lines) {
    const std::string host = line_host(j);
    if (is_meta(j)) {
      for (const auto& i : j.value("interpreters", nlohmann::json::array()))
        if (i.is_object()) hosts_of[str_field(i, "label")].insert(host);
    } else {
      for (const char* key : {"interpreter", "label"})
        if (!str_field(j, key).empty()) hosts_of[str_field(j, key)].insert(host);
    }
  }
  std::set<std::string> notes;
  auto relabel = [&](const std::string& label, const std::string& host, const std::string& stem) {
    if (label.empty()) return label;
    std::string out = label;
    const std::string h = host.empty() ? "unknown-host" : host;
    if (options.tag == "auto") {
      if (hosts_of[label].size() > 1) out = label + "@" + h;
    } else if (options.tag == "host") {
      if (!ends_with(label, "@" + h)) out = label + "@" + h;
    } else if (options.tag == "file") {
      if (!ends_with(label, "@" + stem)) out = label + "@" + stem;
    }
    if (out != label) notes.insert(label + " -> " + out);
    return out;
  };
  for (std::size_t n = 0; n < m.lines.size(); ++n) {
    auto& j = m.lines[n];
    const std::string host = line_host(j);
    if (is_meta(j)) {
      if (!j.contains("interpreters") || !j["interpreters"].is_array()) continue;
      for (auto& i : j["interpreters"]) {
        if (!i.is_object()) continue;
        const std::string old = str_field(i, "label");
        const std::string now = relabel(old, host, stems[n]);
        if (now == old) continue;
        if (!i.contains("original_label")) i["original_label"] = old;
        i["label"] = now;
      }
      continue;
    }
    const bool skip = j.value("type", "") == "skip";
    for (const char* key : {"interpreter", "label"}) {
      const std::string old = str_field(j, key);
      const std::string now = relabel(old, host, stems[n]);
      if (now == old) continue;
      const char* keep = skip ? "original_label" : "original_interpreter";
      if (!j.contains(keep)) j[keep] = old;
      j[key] = now;
    }
  }
  m.relabeled.assign(notes.begin(), notes.end());
  return m;
}

MergedResults merge_files(const std::vector<std::string>& paths, const MergeOptions& options) {
  std::vector<LoadedResults> inputs;
  for (const auto& p : paths) inputs.push_back(load_results_ordered(p));
  return merge_results(std::move(inputs), options);
}

std::string to_jsonl(const MergedResults& merged) {
  std::string out;
  for (const auto& j : merged.lines) out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return out;
}

}  // namespace gilhost
