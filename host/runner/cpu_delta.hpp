#pragma once
// The CPU time a case took, as the runner reports it: two CpuUsage readings (util/clock) as the event's
// CpuDelta (protocol).
#include "protocol/events.hpp"
#include "util/clock.hpp"

namespace gilhost {

// The difference after - before.
protocol::CpuDelta cpu_delta(const CpuUsage& before, const CpuUsage& after);

}  // namespace gilhost
