#include "runner/cpu_delta.hpp"

namespace gilhost {

protocol::CpuDelta cpu_delta(const CpuUsage& b, const CpuUsage& a) {
  protocol::CpuDelta d;
  d.user_ns = a.user_ns - b.user_ns;
  d.sys_ns = a.sys_ns - b.sys_ns;
  d.children_user_ns = a.children_user_ns - b.children_user_ns;
  d.children_sys_ns = a.children_sys_ns - b.children_sys_ns;
  d.cpu_ns = a.total_ns() - b.total_ns();
  d.voluntary_switches = a.voluntary_switches - b.voluntary_switches;
  d.involuntary_switches = a.involuntary_switches - b.involuntary_switches;
  return d;
}

}  // namespace gilhost
