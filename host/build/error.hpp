#pragma once
// What `gilhost build` reports when it stops: one line, maybe lines under it, and the exit status.
#include <stdexcept>
#include <string>
#include <vector>

namespace gilhost {

struct BuildError : std::runtime_error {
  BuildError(int code, const std::string& message, std::vector<std::string> detail_lines = {})
      : std::runtime_error(message), exit_code(code), details(std::move(detail_lines)) {}
  int exit_code;
  std::vector<std::string> details;
};

// Input the user can correct (no such file, not a CPython tree, a checksum that differs): exit status 2.
inline BuildError bad_input(const std::string& message) { return BuildError(2, message); }

// Ctrl-C, SIGTERM or SIGHUP: the shell's status for a death by that signal.
inline BuildError interrupted(int signal) {
  return BuildError(128 + signal, "interrupted; nothing was installed (the temporary folders are removed)");
}

}  // namespace gilhost
