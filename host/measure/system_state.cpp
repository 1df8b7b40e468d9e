#include "measure/system_state.hpp"

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <fstream>
#include <sstream>

#include "measure/machine.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return trim(line);
}

std::optional<double> to_number(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  try {
    return std::stod(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string format(const char* pattern, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, value);
  return buf;
}

}  // namespace

SystemState read_system_state(const std::string& root) {
  const std::string sys = root + "/sys/devices/system/cpu";
  SystemState s;
  s.cores = usable_cores();
  s.governor = read_first_line(sys + "/cpu0/cpufreq/scaling_governor").value_or("");
  // intel_pstate says "no_turbo"; acpi-cpufreq (and AMD) say "boost".
  if (auto no_turbo = to_number(read_first_line(sys + "/intel_pstate/no_turbo"))) s.turbo = *no_turbo == 0;
  else if (auto boost = to_number(read_first_line(sys + "/cpufreq/boost"))) s.turbo = *boost != 0;
  if (auto aslr = to_number(read_first_line(root + "/proc/sys/kernel/randomize_va_space")))
    s.aslr = static_cast<int>(*aslr);
  if (auto load = read_first_line(root + "/proc/loadavg")) {
    std::istringstream in(*load);
    in >> s.load_1m >> s.load_5m >> s.load_15m;
  }
  // cpufreq's current frequency per CPU where it exists, else /proc/cpuinfo's "cpu MHz" lines.
  for (int cpu = 0;; ++cpu) {
    auto khz = to_number(read_first_line(sys + "/cpu" + std::to_string(cpu) + "/cpufreq/scaling_cur_freq"));
    if (!khz) break;
    s.cpu_mhz.push_back(*khz / 1000.0);
  }
  if (s.cpu_mhz.empty()) {
    std::ifstream info(root + "/proc/cpuinfo");
    for (std::string line; std::getline(info, line);)
      if (starts_with(line, "cpu MHz"))
        if (auto mhz = to_number(trim(line.substr(line.find(':') + 1)))) s.cpu_mhz.push_back(*mhz);
  }
  s.isolated_cpus = read_first_line(sys + "/isolated").value_or("");
  s.nohz_full_cpus = read_first_line(sys + "/nohz_full").value_or("");
  return s;
}

nlohmann::json SystemState::to_json() const {
  nlohmann::json j = {{"governor", governor},
                      {"load_avg", {load_1m, load_5m, load_15m}},
                      {"cpu_mhz", cpu_mhz},
                      {"isolated_cpus", isolated_cpus},
                      {"nohz_full_cpus", nohz_full_cpus},
                      {"cores", cores}};
  j["turbo"] = turbo ? nlohmann::json(*turbo) : nlohmann::json();
  j["aslr"] = aslr ? nlohmann::json(*aslr) : nlohmann::json();
  return j;
}

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> cpus;
  auto number = [&](const std::string& text) {
    std::size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(text, &used);
    } catch (const std::exception&) {
    }
    if (text.empty() || used != text.size() || n < 0 || n >= CPU_SETSIZE)
      throw std::invalid_argument("--cpus takes CPU numbers and ranges like 0-3,6, not '" + list + "'");
    return n;
  };
  for (const auto& part : split(list, ',')) {
    const auto dash = part.find('-');
    const int first = number(trim(part.substr(0, dash)));
    const int last = dash == std::string::npos ? first : number(trim(part.substr(dash + 1)));
    if (last < first) throw std::invalid_argument("--cpus: the range '" + part + "' runs backwards");
    for (int c = first; c <= last; ++c) cpus.push_back(c);
  }
  if (cpus.empty()) throw std::invalid_argument("--cpus takes CPU numbers and ranges like 0-3,6, not '" + list + "'");
  return cpus;
}

void pin_to_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot pin to the CPUs given with --cpus");
}

std::vector<std::string> quiet_machine_warnings(const SystemState& s) {
  std::vector<std::string> out;
  if (s.cores > 0 && s.load_1m > s.cores / 2.0)
    out.push_back("the load average is " + format("%.2f", s.load_1m) + " on " + std::to_string(s.cores) +
                  " usable cores: other work is sharing the CPUs, and timings will show it");
  if (!s.governor.empty() && s.governor != "performance")
    out.push_back("the CPU frequency governor is '" + s.governor +
                  "': clock speeds drift with load ('performance' holds them steady)");
  return out;
}

}  // namespace gilhost
