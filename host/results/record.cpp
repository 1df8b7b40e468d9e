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
