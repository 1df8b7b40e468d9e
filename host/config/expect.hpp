#pragma once
// Checking a finished run against the case's expectations for that interpreter.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/experiment.hpp"

namespace gilhost {

// What the checks look at, taken from a run record.
struct RunFacts {
  std::string status;  // ok, error, timeout, crashed
  int exit_code = 0;
  std::string error_type;  // exception type name, or empty
  bool has_result = false;
  nlohmann::json result;
  std::string stdout_text;
  std::string stderr_text;
  bool gil_forced = false;  // a free-threaded build run with its GIL forced on (PYTHON_GIL=1, `+gil`)
};

struct CheckResult {
  std::string description;
  bool ok = false;
  std::string detail;  // why it failed
  nlohmann::json to_json() const { return {{"expect", description}, {"ok", ok}, {"detail", detail}}; }
};

// The applicable expectations' results; when none says what the status should be, "status ok" is
// checked too, so an unexpected exception never passes silently.
std::vector<CheckResult> check_expectations(const Case& c, const Version& v, bool free_threaded, const RunFacts& facts);

// JSON comparison used by `result*` checks: numbers compare numerically, other values by equality.
bool compare_json(CompareOp op, const nlohmann::json& actual, const nlohmann::json& expected);
// result["a"]["b"] for key "a.b"; null json and false when absent.
bool lookup_key(const nlohmann::json& result, const std::string& dotted, nlohmann::json& out);

}  // namespace gilhost
