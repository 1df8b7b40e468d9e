#include "run/plan.hpp"

#include "config/limits.hpp"
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

std::string plan_too_large(const Experiment& ex, std::size_t builds) {
  const std::int64_t rounds = static_cast<std::int64_t>(ex.warmup) + ex.repeat;
  const auto cases = static_cast<std::int64_t>(ex.cases.size()), n = static_cast<std::int64_t>(builds);
  // Each factor is bounded (limits.hpp), so the product fits in 64 bits.
  if (rounds * cases * n <= limits::kMaxPlannedRuns) return "";
  return std::to_string(rounds) + " rounds x " + std::to_string(cases) + " cases x " + std::to_string(n) + " builds is " +
         std::to_string(rounds * cases * n) + " runs; gilhost plans at most " + std::to_string(limits::kMaxPlannedRuns) +
         " (docs/config.md, Limits): fewer rounds (--repeat), cases (--case) or builds (-p)";
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
  s.setup = c.setup;
  s.kwargs = c.mode == CaseMode::call ? c.params : nlohmann::json::object();
  s.argv = c.argv;
  s.subinterpreters = c.subinterpreters;
  s.gil = to_string(c.gil);
  s.free_threaded = interp.free_threaded;
  return s;
}

std::vector<std::string> child_argv(const RunnerSpec& spec, const Interpreter& interp, const std::string& runner_path,
                                    int event_fd, int watch_fd, int token_fd) {
  if (interp.shared) {
    std::vector<std::string> argv{runner_path, "--event-fd", std::to_string(event_fd)};
    if (watch_fd >= 0) argv.insert(argv.end(), {"--watch-fd", std::to_string(watch_fd)});
    if (token_fd >= 0) argv.insert(argv.end(), {"--token-fd", std::to_string(token_fd)});
    else if (!spec.token.empty()) argv.insert(argv.end(), {"--token", spec.token});
    argv.insert(argv.end(), {"--spec", spec.to_json().dump()});
    return argv;
  }
  nlohmann::json py = spec.python_spec(0);
  py["event_fd"] = event_fd;
  if (watch_fd >= 0) py["watch_fd"] = watch_fd;
  if (token_fd >= 0) py["token_fd"] = token_fd;
  else if (!spec.token.empty()) py["token"] = spec.token;
  return {interp.executable, "-c", bootstrap_program(py) + "\n_exec_main()\n"};
}

}  // namespace gilhost
