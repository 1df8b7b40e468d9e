#include "run/plan.hpp"

#include "runner/bootstrap.hpp"

namespace gilhost {

std::optional<std::string> incompatibility(const Case& c, const Interpreter& interp) {
  if (c.requires.python && !c.requires.python->matches(interp.version)) {
    std::string why = "needs Python " + c.requires.python->text();
    return c.requires.because.empty() ? why : why + ": " + c.requires.because;
  }
  if (c.subinterpreters > 0) {
    if (interp.version < Version{3, 12, 0})
      return "subinterpreters with their own GIL need Python 3.12+ (Py_NewInterpreterFromConfig)";
    if (!interp.shared) return "subinterpreters need a shared libpython (this build runs in exec mode)";
  }
  return std::nullopt;
}

Plan plan_runs(const Experiment& ex, const std::vector<Interpreter>& interps) {
  Plan plan;
  for (const auto& c : ex.cases)
    for (const auto& i : interps)
      if (auto why = incompatibility(c, i)) plan.skipped.push_back({c.name, i.label, *why});
  const int rounds = ex.warmup + ex.repeat;
  for (int r = 0; r < rounds; ++r)
    for (const auto& c : ex.cases)
      for (const auto& i : interps) {
        if (incompatibility(c, i)) continue;
        PlannedRun p;
        p.c = &c;
        p.interp = &i;
        p.round = r;
        p.warmup = r < ex.warmup;
        p.repeat = p.warmup ? r : r - ex.warmup;
        plan.runs.push_back(p);
      }
  return plan;
}

RunnerSpec runner_spec(const Case& c, const Interpreter& interp) {
  RunnerSpec s;
  s.libpython = interp.libpython;
  s.executable = interp.executable;
  s.script = c.script;
  s.module = c.module;
  s.mode = to_string(c.mode);
  s.function = c.function;
  s.kwargs = c.mode == CaseMode::call ? c.params : nlohmann::json::object();
  s.argv = c.argv;
  s.subinterpreters = c.subinterpreters;
  s.gil = to_string(c.gil);
  s.free_threaded = interp.free_threaded;
  return s;
}

std::vector<std::string> child_argv(const RunnerSpec& spec, const Interpreter& interp, const std::string& runner_path,
                                    int event_fd, int watch_fd) {
  if (interp.shared) {
    std::vector<std::string> argv{runner_path, "--event-fd", std::to_string(event_fd)};
    if (watch_fd >= 0) argv.insert(argv.end(), {"--watch-fd", std::to_string(watch_fd)});
    argv.insert(argv.end(), {"--spec", spec.to_json().dump()});
    return argv;
  }
  nlohmann::json py = spec.python_spec(0);
  py["event_fd"] = event_fd;
  if (watch_fd >= 0) py["watch_fd"] = watch_fd;
  return {interp.executable, "-c", bootstrap_program(py) + "\n_exec_main()\n"};
}

}  // namespace gilhost
