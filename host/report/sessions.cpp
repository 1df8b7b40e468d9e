#include "report/sessions.hpp"

#include <ctime>
#include <stdexcept>
#include <variant>

#include "results/identity.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::string local_time(std::int64_t unix_ns) {
  const std::time_t t = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm tm{};
  char when[32] = "?";
  if (unix_ns > 0 && ::localtime_r(&t, &tm)) std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  return when;
}

std::string describe(const SessionSummary& s) {
  return std::to_string(s.number) + " started " + s.started + " (" + s.experiment + ")";
}

}  // namespace

std::vector<SessionSummary> list_sessions(const MergedResults& merged) {
  std::vector<SessionSummary> out;
  for (const auto& line : merged.lines)
    if (const auto* m = std::get_if<MetaRecord>(&line))
      out.push_back({static_cast<int>(out.size()) + 1, local_time(m->started_unix_ns), m->experiment.name,
                     m->source.empty() ? m->config_file : m->source});
  return out;
}

std::string several_sessions_note(const std::vector<SessionSummary>& sessions) {
  std::vector<std::string> each;
  for (const auto& s : sessions) each.push_back(describe(s));
  return "the results hold " + std::to_string(sessions.size()) + " sessions, pooled here: " + join(each, "; ") +
         "; pick one with --session N (1 the first, -1 the last)";
}

MergedResults keep_session(MergedResults merged, int n) {
  if (n == 0) return merged;
  const std::vector<SessionSummary> sessions = list_sessions(merged);
  const int count = static_cast<int>(sessions.size());
  const int want = n > 0 ? n : count + n + 1;
  if (want < 1 || want > count) {
    std::vector<std::string> each;
    for (const auto& s : sessions) each.push_back(describe(s));
    throw std::invalid_argument("--session " + std::to_string(n) + ": there " +
                                (count == 1 ? "is 1 session" : "are " + std::to_string(count) + " sessions") +
                                (each.empty() ? "" : ": " + join(each, "; ")));
  }
  // By identity where the lines carry one (sessions that appended to one file interleave); by position
  // for lines of older files, which have none.
  std::string want_id;
  int current = 0;
  for (const auto& line : merged.lines)
    if (std::holds_alternative<MetaRecord>(line) && ++current == want) want_id = line_session_id(line);
  std::vector<ResultsLine> kept;
  current = 0;  // the session the lines so far belong to, by position
  for (auto& line : merged.lines) {
    current += std::holds_alternative<MetaRecord>(line);
    const std::string& id = line_session_id(line);
    if (id.empty() ? current == want : id == want_id) kept.push_back(std::move(line));
  }
  merged.lines = std::move(kept);
  return merged;
}

}  // namespace gilhost
