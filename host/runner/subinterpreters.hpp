#pragma once
// A case run in N subinterpreters, each created and used from its own OS thread (3.12+).
#include <string>
#include <vector>

#include "protocol/events.hpp"
#include "python/capi.hpp"
#include "runner/bootstrap_code.hpp"
#include "runner/runspec.hpp"

namespace gilhost {

// Called with the main interpreter's GIL held; releases it while the workers run. Returns the case event:
// one start for all (a barrier releases every thread at once), per-interpreter outcomes, and the combined
// outcome (result = list of per-interpreter results; the first error; the largest exit code).
// `gils`: where each own-GIL interpreter's GIL lived (runner/gil_locator), when spec.locate_gil.
protocol::CaseEvent run_in_subinterpreters(const py::Api& api, const RunnerSpec& spec, const BootstrapCode& code,
                                           std::vector<protocol::GilEvent>& gils);

}  // namespace gilhost
