#include "results/record.hpp"

#include "discover/interpreter.hpp"

namespace gilhost {

const char* status_name(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return "ok";
    case RunStatus::error: return "error";
    case RunStatus::timeout: return "timeout";
    case RunStatus::crashed: return "crashed";
    case RunStatus::interrupted: return "interrupted";
  }
  return "error";
}

std::optional<RunStatus> parse_status(const std::string& name) {
  for (RunStatus s : {RunStatus::ok, RunStatus::error, RunStatus::timeout, RunStatus::crashed, RunStatus::interrupted})
    if (name == status_name(s)) return s;
  return std::nullopt;
}

SkipRecord SkipRecord::of_selector(std::string experiment, std::string selector, std::string label, std::string reason) {
  SkipRecord s;
  s.experiment = std::move(experiment);
  s.selector = std::move(selector);
  s.label = std::move(label);
  s.reason = std::move(reason);
  return s;
}

SkipRecord SkipRecord::of_case(std::string experiment, std::string case_name, std::string interpreter, std::string reason) {
  SkipRecord s;
  s.experiment = std::move(experiment);
  s.case_name = std::move(case_name);
  s.interpreter = std::move(interpreter);
  s.reason = std::move(reason);
  return s;
}

BuildRecord build_record(const Interpreter& in) {
  BuildRecord b;
  b.label = in.label;
  b.version = in.version_full;
  b.executable = in.executable;
  b.realpath = in.realpath;
  b.source = in.source;
  b.implementation = in.implementation;
  b.free_threaded = in.free_threaded;
  b.gil_forced = in.gil_forced;
  b.shared = in.shared;
  b.supported = in.supported;
  b.libpython = in.libpython;
  b.prefix = in.prefix;
  b.compiler = in.compiler;
  b.build_flags = in.build_flags;
  b.unsupported_reason = in.unsupported_reason;
  b.mode = in.mode();
  return b;
}

}  // namespace gilhost
