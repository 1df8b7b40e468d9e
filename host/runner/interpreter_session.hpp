#pragma once
// The bootstrap inside one interpreter: its namespace, its phases, and what the interpreter says of its
// GIL. (The interpreters themselves: runner/scoped_interpreter.)
#include <cstdint>
#include <optional>
#include <string>

#include "python/capi.hpp"
#include "runner/bootstrap_code.hpp"
#include "runner/runspec.hpp"

namespace gilhost {

// sys._is_gil_enabled() of the current interpreter (true before 3.13: there is always a GIL), or nullopt
// when Python cannot say. The GIL must be held.
std::optional<bool> gil_enabled_now(const py::Api& api);

// The bootstrap's namespace inside the current interpreter (main or sub): the GIL must be held.
class Bootstrap {
 public:
  Bootstrap(const py::Api& api, const RunnerSpec& spec, int index, const BootstrapCode& code);
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  // Calls _prepare/_run with no arguments; false if the bootstrap itself failed (printed to stderr).
  bool call(const char* phase);
  // The JSON outcome from _finish(); empty on failure.
  std::string finish();
  // What _finish() left for the runner: the case's exit status (SystemExit's code, 1 for an exception) and
  // whether the GIL was on at its end (nullopt: not said).
  std::int64_t exit_code() const;
  std::optional<bool> gil_enabled_after() const;

 private:
  const py::Api& api_;
  py::Ref ns_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace gilhost
