#include "report/trace.hpp"

#include <fmt/format.h>

#include <set>

#include "report/threads.hpp"

namespace gilhost {

using nlohmann::json;

namespace {

// Chrome's reserved colour names, so chrome://tracing colours the states alike (Perfetto colours by name).
const char* trace_colour(ThreadState s) {
  switch (s) {
    case ThreadState::cpu: return "thread_state_running";
    case ThreadState::runqueue: return "thread_state_runnable";
    case ThreadState::gil: return "terrible";
    case ThreadState::lock: return "bad";
    case ThreadState::io: return "thread_state_iowait";
    case ThreadState::sleep: return "thread_state_sleeping";
    case ThreadState::other: return "thread_state_unknown";
  }
  return "thread_state_unknown";
}

json metadata(const char* name, std::int64_t pid, std::int64_t tid, json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

// "race / threads[n=4] / 3.12.1 / repeat 2" (and " (warm-up)")
std::string process_name(const RunRecord& r) {
  return fmt::format("{} / {} / {} / repeat {}{}", r.experiment, r.case_name, r.interpreter, r.repeat, r.warmup ? " (warm-up)" : "");
}

// A thread as its track is named: its name, and its process where the run had several.
std::string thread_name(const ThreadRecord& t, bool several_processes) {
  std::string name = t.name.empty() ? "thread" : t.name;
  if (t.main) name += " (main)";
  if (several_processes) name += fmt::format(" (pid {})", t.pid);
  if (!t.python) name += " [not Python]";
  return name;
}

void add_run(json& events, const RunRecord& run, std::int64_t pid) {
  const ThreadStates& ts = *run.thread_states;
  events.push_back(metadata("process_name", pid, 0, {{"name", process_name(run)}}));
  events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
  events.push_back(metadata("process_labels", pid, 0, {{"labels", "GIL wait " + percent_text(ts.gil_wait_share()) + ", GIL: " + ts.gil}}));
  std::set<std::int64_t> pids;
  for (const auto& t : ts.threads) pids.insert(t.pid);
  for (std::size_t k = 0; k < ts.threads.size(); ++k) {
    const ThreadRecord& t = ts.threads[k];
    events.push_back(metadata("thread_name", pid, t.tid, {{"name", thread_name(t, pids.size() > 1)}}));
    events.push_back(metadata("thread_sort_index", pid, t.tid, {{"sort_index", k}}));
    for (const auto& span : thread_spans(t))
      events.push_back({{"name", thread_state_label(span.state)},
                        {"cat", "thread_state"},
                        {"ph", "X"},
                        {"pid", pid},
                        {"tid", t.tid},
                        {"ts", static_cast<double>(span.start_ns) / 1e3},
                        {"dur", static_cast<double>(span.end_ns - span.start_ns) / 1e3},
                        {"cname", trace_colour(span.state)},
                        {"args", {{"state", thread_state_name(span.state)}}}});
  }
}

}  // namespace

json chrome_trace(const ReportModel& model) {
  json events = json::array();
  std::int64_t pid = 0;
  for (const auto& s : model.sections)
    for (const auto& run : s.runs)
      if (run.thread_states) add_run(events, run, ++pid);
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

int traced_runs(const ReportModel& model) {
  int n = 0;
  for (const auto& s : model.sections)
    for (const auto& run : s.runs) n += run.thread_states.has_value();
  return n;
}

}  // namespace gilhost
