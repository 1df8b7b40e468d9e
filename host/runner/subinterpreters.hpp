#pragma once
// A case run in N subinterpreters, each created and used from its own OS thread (3.12+).
#include <string>

#include "protocol/events.hpp"
#include "python/capi.hpp"
#include "runner/bootstrap_code.hpp"
#include "runner/runspec.hpp"

namespace gilhost {

// Called with the main interpreter's GIL held; releases it while the workers run. Returns the case event:
// one start for all (a barrier releases every thread at once), per-interpreter outcomes, and the combined
// outcome (result = list of per-interpreter results; the first error; the largest exit code).
protocol::CaseEvent run_in_subinterpreters(const py::Api& api, const RunnerSpec& spec, const BootstrapCode& code);

}  // namespace gilhost
