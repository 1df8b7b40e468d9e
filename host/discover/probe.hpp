#pragma once
// Asking an interpreter what it is (version, free-threaded, shared libpython), with a cache keyed by
// the executable's real path, size and modification time.
#include <optional>
#include <string>

#include "discover/interpreter.hpp"

namespace gilhost {

// The Python code run by `python -I -c`; prints one JSON object.
const char* probe_source();
// Fills an Interpreter from the probe's JSON output; false if it is not a probe answer.
bool parse_probe_output(const std::string& output, Interpreter& out);

class ProbeCache {
 public:
  explicit ProbeCache(std::string path, bool enabled = true);
  // Probes (or recalls) `executable`; nullopt with `error` when it is not a usable Python.
  std::optional<Interpreter> probe(const std::string& executable, const std::string& source, std::string& error);
  // Writes the cache file back (atomically) if anything changed.
  void save();
  static std::string default_path();

 private:
  std::string path_;
  bool enabled_;
  bool dirty_ = false;
  nlohmann::json entries_ = nlohmann::json::object();
  // Probes that failed (a Python 2, a broken build), by the same key, so every session does not start it
  // again (17 ms a session on the development machine); apart from entries_, which older gilhosts read.
  nlohmann::json failed_ = nlohmann::json::object();
};

}  // namespace gilhost
