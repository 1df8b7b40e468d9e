#pragma once
// Interpreter selectors: all, ft, gil, 3.12, 3.12.1, 3.13t, ">=3.11", or a path; any of them + "+gil"
// (3.14t+gil) selects the free-threaded builds it names again, run with their GIL forced on.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "discover/interpreter.hpp"

namespace gilhost {

struct Skipped {
  std::string selector;
  std::string label;  // the build, when one was found but cannot run
  std::string reason;
  nlohmann::json to_json() const { return {{"selector", selector}, {"label", label}, {"reason", reason}}; }
};

struct Selection {
  std::vector<Interpreter> selected;
  std::vector<Skipped> skipped;
  // Selectors that picked no build at all (a typo, a build not installed): an error before anything runs.
  // "all" is never one: a machine may have no free-threaded build for all+gil.
  std::vector<Skipped> unmatched;
};

// `probe_path` resolves path selectors that discovery did not find (nullopt + reason when unusable).
using PathProber = std::function<std::optional<Interpreter>(const std::string& path, std::string& reason)>;

// Removes a trailing "+gil" from `selector`; true when there was one.
bool strip_gil_suffix(std::string& selector);

// Each build at most once per kind: plain, and forced (`+gil`, its own label and column).
Selection select_interpreters(const std::vector<Interpreter>& found, const std::vector<std::string>& selectors,
                              const PathProber& probe_path);

}  // namespace gilhost
