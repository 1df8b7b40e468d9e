#pragma once
// Run a short command and capture its stdout (for probing interpreters; measured runs use run/child).
#include <string>
#include <vector>

namespace gilhost {

struct Captured {
  int exit_code = -1;  // -1: could not start, or killed
  bool timed_out = false;
  std::string out;
  std::string err;
};

Captured run_capture(const std::vector<std::string>& argv, double timeout_s);

}  // namespace gilhost
