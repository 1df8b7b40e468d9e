#include "build/smoke.hpp"

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

const char* smoke_source() {
  return R"PY(import json, sys, sysconfig
print(json.dumps({
    "gilhost_smoke": 1,
    "version": sys.version.split()[0],
    "gil_disabled": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    "ldlibrary": sysconfig.get_config_var("LDLIBRARY") or "",
}))
)PY";
}

std::optional<SmokeAnswer> parse_smoke_output(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("gilhost_smoke")) continue;
    SmokeAnswer a;
    try {
      a.version = j.at("version").get<std::string>();
      a.gil_disabled = j.at("gil_disabled").get<bool>();
      a.ldlibrary = j.at("ldlibrary").get<std::string>();
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
    return a;
  }
  return std::nullopt;
}

std::string smoke_problem(const SmokeAnswer& a, const std::string& version, bool free_threaded, const std::string& prefix) {
  if (a.version != version) return "it says it is Python " + a.version + ", the source is " + version;
  if (a.gil_disabled != free_threaded)
    return std::string("Py_GIL_DISABLED is ") + (a.gil_disabled ? "1" : "0") + ", a " +
           (free_threaded ? "free-threaded" : "GIL") + " build was asked for";
  if (a.ldlibrary.find(".so") == std::string::npos) return "it has no shared libpython (LDLIBRARY is '" + a.ldlibrary + "')";
  const fs::path lib = fs::path(prefix) / "lib" / a.ldlibrary;
  std::error_code ec;
  if (!fs::is_regular_file(lib, ec)) return "its shared libpython " + lib.string() + " is missing";
  return "";
}

std::vector<std::string> staged_environment(const std::vector<std::string>& ours, const std::string& prefix) {
  std::vector<std::string> env;
  for (const auto& e : ours)
    if (!starts_with(e, "PYTHON") && !starts_with(e, "LD_LIBRARY_PATH=")) env.push_back(e);
  env.push_back("LD_LIBRARY_PATH=" + (fs::path(prefix) / "lib").string());
  env.push_back("PYTHONHOME=" + prefix);
  return env;
}

}  // namespace gilhost
