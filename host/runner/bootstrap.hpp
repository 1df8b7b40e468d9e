#pragma once
// The Python half of the runner: one source that runs inside every interpreter the host drives.
//
// The C++ runner executes it (compiled once per build, runner/bootstrap_code) after defining `_spec` (a
// dict built with the C API), then calls `_prepare()`, brackets `_run()` with host clocks, and takes the
// outcome from `_finish()` (a JSON string). In exec mode (a build without a shared libpython) the
// interpreter itself runs it with `python -c`, after `_spec` as a literal, with `_exec_main()` (its own
// source) doing the bracketing with the same clock (time.monotonic_ns is CLOCK_MONOTONIC).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gilhost {

const std::string& bootstrap_source();
// The bootstrap in two, as the runner loads it: `hot`, what every run uses, and `cold`, from its "# gilhost:
// cold" line on, what most runs never do (errors; values other than the plain ones `_plain` writes), which
// the runner hands over marshalled and `_cold()` runs at its first use. `cold` starts with as many blank
// lines as `hot` has lines, so a traceback's line numbers are bootstrap_source()'s.
struct BootstrapParts {
  std::string hot, cold;
};
BootstrapParts bootstrap_parts();
// fnv1a64 of the source and its NUL, computed at compile time: the bootstrap cache's key.
std::uint64_t bootstrap_source_hash();
// `_exec_main()` and its helpers: exec mode's part only.
const std::string& exec_main_source();
// A Python expression equal to a JSON value (true -> True, null -> None, strings escaped).
std::string to_python_literal(const nlohmann::json& value);
// `_spec = {...}\n`: defines the spec the bootstrap reads.
std::string spec_statement(const nlohmann::json& spec);
// spec_statement(), the bootstrap and exec_main_source(): the code `python -c` executes in exec mode.
std::string bootstrap_program(const nlohmann::json& spec);

}  // namespace gilhost
