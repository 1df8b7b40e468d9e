#include "report/trace.hpp"

#include <fmt/format.h>

#include <set>

#include "report/threads.hpp"
#include "results/results_file.hpp"

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

// Every event of one run, to `emit` one at a time; `ts` the run's thread states with their timelines.
template <typename Emit>
void run_events(const RunRecord& run, const ThreadStates& ts, std::int64_t pid, Emit&& emit) {
  emit(metadata("process_name", pid, 0, {{"name", process_name(run)}}));
  emit(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
  emit(metadata("process_labels", pid, 0, {{"labels", "GIL wait " + percent_text(ts.gil_wait_share()) + ", GIL: " + ts.gil}}));
  std::set<std::int64_t> pids;
  for (const auto& t : ts.threads) pids.insert(t.pid);
  for (std::size_t k = 0; k < ts.threads.size(); ++k) {
    const ThreadRecord& t = ts.threads[k];
    emit(metadata("thread_name", pid, t.tid, {{"name", thread_name(t, pids.size() > 1)}}));
    emit(metadata("thread_sort_index", pid, t.tid, {{"sort_index", k}}));
    for (const auto& span : thread_spans(t))
      emit({{"name", thread_state_label(span.state)},
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
      if (run.thread_states) run_events(run, *run.thread_states, ++pid, [&](json e) { events.push_back(std::move(e)); });
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const ReportModel& model, const std::function<void(std::string_view)>& out) {
  out("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
  bool first = true;
  auto emit = [&](const json& e) {
    out(first ? "\n" : ",\n");
    first = false;
    out(e.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  std::int64_t pid = 0;
  for (const auto& s : model.sections)
    for (const auto& run : s.runs) {
      if (!run.thread_states) continue;
      // The model's copy is the light one (no timelines) where the run can be read again by its offset.
      if (run.origin.can_read_again()) {
        const RunRecord full = read_run_again(run);
        if (full.thread_states) run_events(run, *full.thread_states, ++pid, emit);
      } else {
        run_events(run, *run.thread_states, ++pid, emit);
      }
    }
  out("\n]}\n");
}

int traced_runs(const ReportModel& model) {
  int n = 0;
  for (const auto& s : model.sections)
    for (const auto& run : s.runs) n += run.thread_states.has_value();
  return n;
}

}  // namespace gilhost
