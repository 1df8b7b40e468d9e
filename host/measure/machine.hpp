#pragma once
// Metadata about this machine, recorded with every results file.
#include <nlohmann/json.hpp>

namespace gilhost {

int usable_cores();  // CPUs this process may run on (sched_getaffinity)
nlohmann::json machine_metadata();

}  // namespace gilhost
