#include "runner/subinterpreters.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "measure/clock.hpp"
#include "runner/interpreter_session.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

struct Worker {
  std::string outcome;  // JSON from _finish()
  std::string error;    // creation or bootstrap failure
  std::int64_t end_ns = 0;
};

// Everyone waits for `go` before timing starts; the coordinator waits for `ready` and `finished`.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  int ready = 0;
  int finished = 0;
  bool go = false;

  void arrive(int& counter) {
    std::lock_guard<std::mutex> lock(m);
    ++counter;
    cv.notify_all();
  }
  void wait_for(int& counter, int n) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return counter >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(m);
    go = true;
    cv.notify_all();
  }
  void wait_open() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return go; });
  }
};

// The config a case's `gil` asks for, as this build accepts it; `note` says where the two differ.
py::PyInterpreterConfig config_for(const RunnerSpec& spec, std::string& note) {
  if (spec.gil != "shared") {
    // Isolated: own GIL and allocator, threads allowed, no fork/exec (CPython's own default for this).
    return py::PyInterpreterConfig{0, 0, 0, 1, 0, 1, py::kOwnGil};
  }
  // The legacy settings: one GIL and one allocator for all interpreters. A free-threaded build refuses
  // them as they are (it allows no single-phase init extension in a subinterpreter), so there only
  // check_multi_interp_extensions differs; "shared GIL" is then the main interpreter's: none, unless it
  // is forced on (PYTHON_GIL=1, the `+gil` selector).
  if (!spec.free_threaded) return py::PyInterpreterConfig{1, 1, 1, 1, 1, 0, py::kSharedGil};
  note = "free-threaded build: the legacy shared-GIL config with check_multi_interp_extensions=1 (the only "
         "legacy config it allows); the interpreters share the main one's GIL, which is off unless forced on";
  return py::PyInterpreterConfig{1, 1, 1, 1, 1, 1, py::kSharedGil};
}

void worker_main(const py::Api& api, const RunnerSpec& spec, const py::PyInterpreterConfig& config,
                 const BootstrapCode& code, int index, Gate& gate, Worker& out) {
  // Attach to the main interpreter first: Py_NewInterpreterFromConfig needs a current thread state.
  py::PyGILState_STATE gilstate = api.PyGILState_Ensure();
  py::PyThreadState* main_tstate = api.PyThreadState_Get();
  py::PyThreadState* sub = nullptr;
  py::PyStatus status = api.Py_NewInterpreterFromConfig(&sub, &config);
  if (status.type != 0 || sub == nullptr) {
    out.error = std::string("Py_NewInterpreterFromConfig failed: ") + (status.err_msg ? status.err_msg : "?");
    api.PyThreadState_Swap(main_tstate);
    api.PyGILState_Release(gilstate);
    gate.arrive(gate.ready);
    gate.arrive(gate.finished);
    return;
  }
  {
    Bootstrap boot(api, spec, index, code);
    if (!boot.ok()) out.error = boot.error();
    if (boot.ok()) boot.call("_prepare");
    {
      // Wait without holding this interpreter's GIL: with a shared GIL, holding it would stall the others.
      py::GilRelease released(api);
      gate.arrive(gate.ready);
      gate.wait_open();
    }
    if (boot.ok()) boot.call("_run");
    out.end_ns = monotonic_ns();
    {
      py::GilRelease released(api);
      gate.arrive(gate.finished);
    }
    if (boot.ok()) out.outcome = boot.finish();
  }  // the namespace is released inside its own interpreter
  api.Py_EndInterpreter(sub);            // leaves no current thread state
  api.PyEval_RestoreThread(main_tstate);  // re-attach to the main interpreter, taking its GIL
  api.PyGILState_Release(gilstate);
}

// The run's outcome from the workers': the list of results (a result when each gave one), the first
// error, the largest exit code, the GIL on if it was on in any interpreter; `per` gets each worker's own.
nlohmann::json combine_outcomes(const std::vector<Worker>& workers, nlohmann::json& per) {
  nlohmann::json results = nlohmann::json::array();
  std::vector<std::string> reenabled_by;
  nlohmann::json combined = {{"has_result", true}, {"error", nullptr}, {"exit_code", 0},
                             {"metrics", nlohmann::json::object()}, {"marks", nlohmann::json::array()}};
  for (const Worker& w : workers) {
    nlohmann::json o = w.outcome.empty() ? nlohmann::json::object() : nlohmann::json::parse(w.outcome, nullptr, false);
    if (o.is_discarded()) o = nlohmann::json::object();
    if (!w.error.empty()) {
      o["error"] = {{"type", "SubinterpreterError"}, {"qualname", "gilhost.SubinterpreterError"}, {"message", w.error}};
      o["exit_code"] = 1;
    }
    results.push_back(o.value("result", nlohmann::json()));
    // A result for the run only when every interpreter gave one: [null, null] from interpreters that were
    // never created is no result.
    combined["has_result"] = combined["has_result"].get<bool>() && o.value("has_result", false);
    if (combined["error"].is_null() && o.contains("error") && !o["error"].is_null()) combined["error"] = o["error"];
    combined["exit_code"] = std::max(combined["exit_code"].get<int>(), o.value("exit_code", 0));
    for (const char* key : {"gil_enabled", "gil_enabled_before", "gil_forced"})
      if (o.contains(key) && o[key].is_boolean()) combined[key] = combined.value(key, false) || o[key].get<bool>();
    if (o.contains("python_version")) combined["python_version"] = o["python_version"];
    for (const auto& name : o.value("gil_reenabled_by", nlohmann::json::array()))
      if (name.is_string()) add_unique(reenabled_by, name.get<std::string>());
    o["end_ns"] = w.end_ns;
    per.push_back(std::move(o));
  }
  combined["gil_reenabled_by"] = reenabled_by;
  combined["result"] = results;
  return combined;
}

}  // namespace

nlohmann::json run_in_subinterpreters(const py::Api& api, const RunnerSpec& spec, const BootstrapCode& code) {
  const int n = spec.subinterpreters;
  std::string note;
  const py::PyInterpreterConfig config = config_for(spec, note);
  std::vector<Worker> workers(static_cast<std::size_t>(n));
  Gate gate;
  std::int64_t start_ns = 0;
  CpuUsage before, after;
  {
    py::GilRelease released(api);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back(worker_main, std::cref(api), std::cref(spec), std::cref(config), std::cref(code), i,
                           std::ref(gate), std::ref(workers[static_cast<std::size_t>(i)]));
    gate.wait_for(gate.ready, n);
    before = CpuUsage::now();
    start_ns = monotonic_ns();
    gate.open();
    gate.wait_for(gate.finished, n);
    after = CpuUsage::now();
    for (auto& t : threads) t.join();
  }

  // A worker that could not create its interpreter ran nothing: no end time, so a run where none could
  // has no wall time at all (0), rather than the time the others took to fail.
  std::int64_t end_ns = start_ns;
  for (const Worker& w : workers) end_ns = std::max(end_ns, w.end_ns);
  nlohmann::json per = nlohmann::json::array();
  nlohmann::json combined = combine_outcomes(workers, per);
  // No interpreter could say (none was created): the main one's GIL, held again here, is the one they
  // would have had or shared.
  if (!combined.contains("gil_enabled"))
    if (const std::optional<bool> on = gil_enabled_now(api)) combined["gil_enabled"] = combined["gil_enabled_before"] = *on;
  nlohmann::json event = {{"event", "case"},
                          {"mode", "subinterpreters"},
                          {"subinterpreters", n},
                          {"gil", spec.gil},
                          {"start_ns", start_ns},
                          {"end_ns", end_ns},
                          {"wall_ns", end_ns - start_ns},
                          {"cpu", cpu_delta_json(before, after)},
                          {"per_interpreter", per},
                          {"outcome", combined}};
  if (!note.empty()) event["note"] = note;
  return event;
}

}  // namespace gilhost
