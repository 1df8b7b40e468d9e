#pragma once
// How quiet the machine is, as pyperf's `system show` checks it: what every session records beside its
// results, and what gilhost warns about before measuring. Read from /proc and /sys; a value the kernel
// does not expose (a VM has no cpufreq) is empty, never guessed.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost {

struct SystemState {
  std::string governor;       // "performance", "powersave", … (cpu0's); "" without cpufreq
  std::optional<bool> turbo;  // boost/turbo on; none where the kernel does not say
  std::optional<int> aslr;    // /proc/sys/kernel/randomize_va_space: 0 off, 2 full
  double load_1m = 0, load_5m = 0, load_15m = 0;
  std::vector<double> cpu_mhz;  // per online CPU, now
  std::string isolated_cpus;    // /sys/devices/system/cpu/isolated ("" none)
  std::string nohz_full_cpus;   // /sys/devices/system/cpu/nohz_full
  int cores = 0;                // CPUs this process may run on

  nlohmann::json to_json() const;
};

// Reads the state under `root` ("/" normally; a fake tree in tests).
SystemState read_system_state(const std::string& root = "/");

// "0-3,6" -> {0, 1, 2, 3, 6}; throws std::invalid_argument with what is wrong.
std::vector<int> parse_cpu_list(const std::string& list);
// Pins this process (and so every child it starts) to `cpus`; throws std::system_error.
void pin_to_cpus(const std::vector<int>& cpus);

// What would disturb a measurement now, one line each (empty: nothing). The load average is the one
// gilhost can judge everywhere: above half the usable cores, other work is sharing them.
std::vector<std::string> quiet_machine_warnings(const SystemState& s);

}  // namespace gilhost
