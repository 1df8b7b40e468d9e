#include "report/merge.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "results/identity.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::string hostname_of(const MetaRecord& meta) { return meta.machine ? meta.machine->hostname : ""; }

// The host a line belongs to: a record's tag, or a meta's machine.
std::string line_host(const ResultsLine& line) {
  if (const auto* meta = std::get_if<MetaRecord>(&line)) return hostname_of(*meta);
  if (const auto* run = std::get_if<RunRecord>(&line)) return run->origin.host;
  return std::get<SkipRecord>(line).origin.host;
}

const std::string& line_source(const ResultsLine& line) {
  if (const auto* meta = std::get_if<MetaRecord>(&line)) return meta->source;
  if (const auto* run = std::get_if<RunRecord>(&line)) return run->origin.source;
  return std::get<SkipRecord>(line).origin.source;
}

// A record's origin as the session it was read in says, where it has none yet.
void tag_origin(RecordOrigin& o, const std::string& host, const std::string& path, int session) {
  // A merged file merged again keeps the tags it has.
  if (o.host.empty()) o.host = host;
  if (o.source.empty()) o.source = path;
  if (!o.session) o.session = std::max(session, 0);
}

// Relabels one label, keeping the label it had in `original` the first time.
void relabel_field(std::string& label, std::optional<std::string>& original, const std::string& now) {
  if (now == label) return;
  if (!original) original = label;
  label = now;
}

}  // namespace

std::string strip_host_tag(const std::string& label, const std::string& host) {
  const std::string suffix = "@" + host;
  if (!host.empty() && ends_with(label, suffix) && label.size() > suffix.size())
    return label.substr(0, label.size() - suffix.size());
  return label;
}

namespace {

// Every input's lines in order, each seen once (the same run read twice counts once), tagged with the
// file, host and session it came from; `stems[n]`: the stem of line n's file.
void gather_lines(std::vector<LoadedResults>& inputs, MergedResults& m, std::vector<std::string>& stems) {
  SeenLines seen;
  for (auto& in : inputs) {
    m.sources.push_back(in.path);
    m.malformed_lines += in.malformed_lines;
    m.impossible.insert(m.impossible.end(), in.impossible.begin(), in.impossible.end());
    std::string host;
    int session = -1;
    // A tagged record belongs to the meta with its session id wherever it stands (interleaved sessions).
    std::map<std::string, std::pair<int, std::string>> session_of;  // session id -> index, host
    for (auto& line : in.lines) {
      if (!seen.first_sight(line)) {
        ++m.duplicate_lines;
        continue;
      }
      if (auto* meta = std::get_if<MetaRecord>(&line)) {
        ++session;
        host = hostname_of(*meta);
        if (meta->source.empty()) meta->source = in.path;
        if (!meta->session) meta->session = session;
        if (!meta->session_id.empty()) session_of[meta->session_id] = {session, host};
      } else {
        RecordOrigin& o = std::holds_alternative<RunRecord>(line) ? std::get<RunRecord>(line).origin
                                                                  : std::get<SkipRecord>(line).origin;
        const auto own = session_of.find(o.session_id);
        if (own != session_of.end()) tag_origin(o, own->second.second, in.path, own->second.first);
        else tag_origin(o, host, in.path, session);
      }
      stems.push_back(std::filesystem::path(line_source(line)).stem().string());
      m.lines.push_back(std::move(line));
    }
  }
}

// Which hosts each label ran (or was skipped) on.
std::map<std::string, std::set<std::string>> hosts_of_labels(const MergedResults& m) {
  std::map<std::string, std::set<std::string>> hosts_of;
  for (const auto& line : m.lines) {
    const std::string host = line_host(line);
    if (const auto* meta = std::get_if<MetaRecord>(&line)) {
      for (const auto& b : meta->interpreters) hosts_of[b.label].insert(host);
    } else if (const auto* run = std::get_if<RunRecord>(&line)) {
      if (!run->interpreter.empty()) hosts_of[run->interpreter].insert(host);
    } else {
      const auto& skip = std::get<SkipRecord>(line);
      for (const std::string* label : {&skip.interpreter, &skip.label})
        if (!label->empty()) hosts_of[*label].insert(host);
    }
  }
  return hosts_of;
}

}  // namespace

MergedResults merge_results(std::vector<LoadedResults> inputs, const MergeOptions& options) {
  if (options.tag != "auto" && options.tag != "host" && options.tag != "file" && options.tag != "none")
    throw std::invalid_argument("unknown label tag '" + options.tag + "' (auto, host, file or none)");
  MergedResults m;
  std::vector<std::string> stems;  // per line: the stem of the file it first came from
  gather_lines(inputs, m, stems);
  if (options.tag == "none") return m;

  std::map<std::string, std::set<std::string>> hosts_of = hosts_of_labels(m);
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
    auto& line = m.lines[n];
    const std::string host = line_host(line);
    if (auto* meta = std::get_if<MetaRecord>(&line)) {
      for (auto& b : meta->interpreters) relabel_field(b.label, b.original_label, relabel(b.label, host, stems[n]));
    } else if (auto* run = std::get_if<RunRecord>(&line)) {
      relabel_field(run->interpreter, run->original_interpreter, relabel(run->interpreter, host, stems[n]));
    } else {
      auto& skip = std::get<SkipRecord>(line);
      relabel_field(skip.interpreter, skip.original_label, relabel(skip.interpreter, host, stems[n]));
      relabel_field(skip.label, skip.original_label, relabel(skip.label, host, stems[n]));
    }
  }
  m.relabeled.assign(notes.begin(), notes.end());
  return m;
}

MergedResults merge_files(const std::vector<std::string>& paths, const MergeOptions& options, const ReadOptions& read) {
  std::vector<LoadedResults> inputs;
  for (const auto& p : paths) inputs.push_back(load_results_ordered(p, read));
  return merge_results(std::move(inputs), options);
}

}  // namespace gilhost
