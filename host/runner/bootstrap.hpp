#pragma once
// The Python half of the runner: one source that runs inside every interpreter the host drives.
//
// The C++ runner executes it with PyRun_StringFlags after defining `_spec` (a dict literal), then calls
// `_prepare()`, brackets `_run()` with host clocks, and takes the outcome from `_finish()` (a JSON string).
// In exec mode (a build without a shared libpython) the interpreter itself runs it with `python -c`, and
// `_exec_main()` does the bracketing with the same clock (time.monotonic_ns is CLOCK_MONOTONIC).
#include <string>

#include <nlohmann/json.hpp>

namespace gilhost {

const std::string& bootstrap_source();
// A Python expression equal to a JSON value (true -> True, null -> None, strings escaped).
std::string to_python_literal(const nlohmann::json& value);
// `_spec = {...}\n`: defines the spec the bootstrap reads.
std::string spec_statement(const nlohmann::json& spec);
// spec_statement() followed by the bootstrap: the code `python -c` executes in exec mode.
std::string bootstrap_program(const nlohmann::json& spec);

}  // namespace gilhost
