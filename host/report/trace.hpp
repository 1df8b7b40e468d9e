#pragma once
// Runs' thread timelines as a Chrome Trace Event file (`gilhost report FILE --format trace`), which Perfetto
// UI (ui.perfetto.dev) and chrome://tracing open: {"traceEvents": [...], "displayTimeUnit": "ms"}. One
// process per run that has thread states (a synthetic pid, named experiment / case / build / repeat), one
// thread per thread of the run (its tid and name), one complete event ("ph": "X") per stretch of one state,
// named by the state's label, ts and dur in microseconds since the run's spawn.
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "report/model.hpp"

namespace gilhost {

nlohmann::json chrome_trace(const ReportModel& model);
// The same document written a run at a time to `out`: each run's thread states are read again from its
// file by offset (RecordOrigin) where the model's were read without timelines (ReadOptions), so memory
// holds one run's events, never the whole trace. The document's text: events one per line.
void write_chrome_trace(const ReportModel& model, const std::function<void(std::string_view)>& out);
// The runs chrome_trace draws: those with thread states, every section's, in file order.
int traced_runs(const ReportModel& model);

}  // namespace gilhost
