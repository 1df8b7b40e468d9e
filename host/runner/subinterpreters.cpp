#include "runner/subinterpreters.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "runner/cpu_delta.hpp"
#include "util/clock.hpp"
#include "protocol/codec.hpp"
#include "runner/gil_locator.hpp"
#include "runner/interpreter_session.hpp"
#include "runner/scoped_interpreter.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

struct Worker {
  std::string outcome;  // JSON from _finish()
  std::string error;    // creation or bootstrap failure
  std::int64_t end_ns = 0;
  std::optional<protocol::GilEvent> gil;  // its own GIL, located
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

// An own-GIL interpreter's GIL. Not on 3.12 (the build whose creations are serialized): a thread state
// made there for such an interpreter from another thread aborts the process at exit (free(): invalid
// pointer), so its GIL stays unlocated and a wait on it counts as a lock wait.
protocol::GilEvent locate_own_gil(const py::Api& api, int interpreter, bool is_312) {
  if (!is_312) return locate_gil(api, interpreter);
  protocol::GilEvent event;
  event.interpreter = interpreter;
  event.has_gil = true;
  event.note = "3.12: an own-GIL interpreter's GIL is not located";
  return event;
}

void worker_main(const py::Api& api, const RunnerSpec& spec, const py::PyInterpreterConfig& config,
                 bool serialize_creation, const BootstrapCode& code, int index, Gate& gate, Worker& out) {
  SubInterpreter sub(api, config, serialize_creation);
  if (!sub) {
    out.error = sub.error();
    gate.arrive(gate.ready);
    gate.arrive(gate.finished);
    return;
  }
  if (spec.locate_gil && config.gil == py::kOwnGil) out.gil = locate_own_gil(api, index + 1, serialize_creation);
  Bootstrap boot(api, spec, index, code);  // its namespace is released inside its own interpreter, before `sub` ends
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
}

// One worker's outcome: what its _finish() said, or its failure as a SubinterpreterError.
protocol::Outcome outcome_of(const Worker& w) {
  protocol::Outcome o;
  std::string error = w.error;
  if (!w.outcome.empty()) {
    std::string why;
    if (auto decoded = protocol::decode_outcome(w.outcome, why)) o = std::move(*decoded);
    else if (error.empty()) error = why;
  } else if (error.empty()) {
    error = "the bootstrap's _finish failed (traceback on stderr)";
  }
  if (!error.empty()) {
    o.error = protocol::CaseError{"SubinterpreterError", "gilhost.SubinterpreterError", error};
    o.exit_code = 1;
  }
  return o;
}

// The run's outcome from the workers': the list of results (a result when each gave one), the first
// error, the largest exit code, the GIL on if it was on in any interpreter; `per` gets each worker's own.
protocol::Outcome combine_outcomes(const std::vector<Worker>& workers, std::vector<protocol::InterpreterOutcome>& per) {
  protocol::Outcome combined;
  combined.has_result = true;
  combined.result = nlohmann::json::array();
  auto either = [](std::optional<bool>& into, const std::optional<bool>& one) {
    if (one) into = into.value_or(false) || *one;
  };
  for (const Worker& w : workers) {
    protocol::Outcome o = outcome_of(w);
    combined.result.push_back(o.result);
    // A result for the run only when every interpreter gave one: [null, null] from interpreters that were
    // never created is no result.
    combined.has_result = combined.has_result && o.has_result;
    if (!combined.error && o.error) combined.error = o.error;
    combined.exit_code = std::max(combined.exit_code, o.exit_code);
    either(combined.gil_enabled, o.gil_enabled);
    either(combined.gil_enabled_before, o.gil_enabled_before);
    if (o.import_ns) combined.import_ns = std::max(combined.import_ns.value_or(0), *o.import_ns);
    combined.gil_forced = combined.gil_forced || o.gil_forced;
    if (!o.python_version.empty()) combined.python_version = o.python_version;
    for (const auto& name : o.gil_reenabled_by) add_unique(combined.gil_reenabled_by, name);
    per.push_back({std::move(o), w.end_ns});
  }
  return combined;
}

}  // namespace

protocol::CaseEvent run_in_subinterpreters(const py::Api& api, const RunnerSpec& spec, const BootstrapCode& code,
                                           std::vector<protocol::GilEvent>& gils) {
  const int n = spec.subinterpreters;
  std::string note;
  const py::PyInterpreterConfig config = config_for(spec, note);
  const bool serialize_creation = subinterpreter_creation_needs_lock(api.Py_GetVersion());
  std::vector<Worker> workers(static_cast<std::size_t>(n));
  Gate gate;
  std::int64_t start_ns = 0;
  CpuUsage before, after;
  {
    py::GilRelease released(api);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back(worker_main, std::cref(api), std::cref(spec), std::cref(config), serialize_creation,
                           std::cref(code), i, std::ref(gate), std::ref(workers[static_cast<std::size_t>(i)]));
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
  protocol::CaseEvent event;
  event.mode = protocol::RunMode::subinterpreters;
  event.subinterpreters = n;
  event.gil = spec.gil;
  event.start_ns = start_ns;
  event.end_ns = end_ns;
  event.wall_ns = end_ns - start_ns;
  event.cpu = cpu_delta(before, after);
  event.outcome = combine_outcomes(workers, event.per_interpreter);
  for (const Worker& w : workers)
    if (w.gil) gils.push_back(*w.gil);
  // No interpreter could say (none was created): the main one's GIL, held again here, is the one they
  // would have had or shared.
  if (!event.outcome.gil_enabled)
    if (const std::optional<bool> on = gil_enabled_now(api)) event.outcome.gil_enabled = event.outcome.gil_enabled_before = *on;
  event.note = note;
  return event;
}

}  // namespace gilhost
