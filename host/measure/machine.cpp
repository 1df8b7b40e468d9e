#include "measure/machine.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace gilhost {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

namespace {
std::string first_value(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "";
}
}  // namespace

nlohmann::json machine_metadata() {
  utsname u{};
  uname(&u);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  long mem_kb = 0;
  try {
    mem_kb = std::stol(first_value("/proc/meminfo", "MemTotal"));
  } catch (const std::exception&) {
  }
  return {{"hostname", host},
          {"kernel", std::string(u.sysname) + " " + u.release},
          {"arch", u.machine},
          {"cpu_model", first_value("/proc/cpuinfo", "model name")},
          {"cores", usable_cores()},
          {"online_cpus", sysconf(_SC_NPROCESSORS_ONLN)},
          {"memory_bytes", static_cast<long long>(mem_kb) * 1024}};
}

}  // namespace gilhost
