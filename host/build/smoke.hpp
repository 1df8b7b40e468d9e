#pragma once
// The check a staged build passes before it moves into place: it starts, it is the version and the GIL
// choice asked for, and its shared libpython exists. The staged python answers one JSON line.
#include <optional>
#include <string>
#include <vector>

namespace gilhost {

// The code run as `python3 -c`; prints {"gilhost_smoke": 1, "version", "gil_disabled", "ldlibrary"}.
const char* smoke_source();

struct SmokeAnswer {
  std::string version;  // sys.version's first word: PY_VERSION
  bool gil_disabled = false;
  std::string ldlibrary;  // sysconfig LDLIBRARY, "libpython3.14t.so"
};

// The answer in the output (the line that is one), or nullopt.
std::optional<SmokeAnswer> parse_smoke_output(const std::string& output);
// Empty when the build in `prefix` is what was asked, else what differs.
std::string smoke_problem(const SmokeAnswer& answer, const std::string& version, bool free_threaded, const std::string& prefix);
// The environment to run a staged build in: ours without PYTHON* and LD_LIBRARY_PATH, then its lib
// folder as LD_LIBRARY_PATH (its rpath names the final place, which does not exist yet) and its prefix as
// PYTHONHOME.
std::vector<std::string> staged_environment(const std::vector<std::string>& ours, const std::string& prefix);

}  // namespace gilhost
