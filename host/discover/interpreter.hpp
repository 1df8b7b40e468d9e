#pragma once
// One Python build found on this machine, as its probe described it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/version.hpp"

namespace gilhost {

struct Interpreter {
  std::string executable;  // as found (kept: a venv's python differs from its target)
  std::string realpath;
  std::string source;  // "PATH", "pyenv", "uv", "explicit"
  std::string implementation;  // "cpython", "pypy", ...
  Version version;
  std::string version_full;  // sys.version's first word, e.g. "3.13.0"
  bool free_threaded = false;
  bool gil_forced = false;   // selected with `+gil`: runs with PYTHON_GIL=1, a column of its own
  bool shared = false;       // a shared libpython exists and will be loaded (embed mode)
  std::string libpython;
  std::string prefix;
  std::string compiler;
  std::string build_flags;  // CONFIG_ARGS
  bool supported = true;
  std::string unsupported_reason;
  std::string label;  // unique in one listing: "3.12.1", "3.13.0t", "3.11.2 (/usr/bin/python3.11)"

  std::string mode() const { return shared ? "embed" : "exec"; }
  // The default label: version plus "t" for free-threaded builds, "+gil" when its GIL is forced on.
  std::string short_label() const { return version_full + (free_threaded ? "t" : "") + (gil_forced ? "+gil" : ""); }
  nlohmann::json to_json() const;
  static Interpreter from_json(const nlohmann::json& j);
};

// Applies the support rule: CPython >= 3.9 (the runner uses 3.9's exported API).
void classify_support(Interpreter& interp);
// The same free-threaded build run with its GIL forced on, labelled as such ("3.14.7t+gil", or
// "3.14.7t+gil (/path)" where the label carries the path).
Interpreter with_gil_forced(Interpreter interp);
// Gives every interpreter a label unique in the list (adds the path where two share a version).
void assign_labels(std::vector<Interpreter>& list);

}  // namespace gilhost
