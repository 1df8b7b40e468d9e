#pragma once
// Short commands and build steps: a child in its own process group, its output handed over as it comes
// (measured runs use run/child, which also samples and bounds them).
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gilhost {

struct ProcessOptions {
  std::string cwd;                                     // empty: ours
  std::optional<std::vector<std::string>> env;         // "KEY=VALUE", the whole environment; nullopt: ours
  bool merge_stderr = false;                           // stderr into the stdout stream (one ordered log)
  double timeout_s = 0;                                // 0: none
  const std::atomic<int>* interrupt = nullptr;         // non-zero: kill the process group and stop
};

struct ProcessResult {
  int exit_code = -1;  // -1: could not start, killed, or ended by a signal
  int signal = 0;
  bool timed_out = false;
  bool interrupted = false;
};

// stream: 1 (stdout, and stderr when merged) or 2.
using StreamSink = std::function<void(int stream, std::string_view data)>;

// Runs argv (a name without '/' is looked up on $PATH) with stdin from /dev/null, in its own process group,
// killed if we die. Returns once the child has exited and what it wrote is read (a grandchild that keeps
// the pipe open does not hold us); a timeout or an interrupt kills the whole group.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options, const StreamSink& sink);

struct Captured {
  int exit_code = -1;  // -1: could not start, or killed
  bool timed_out = false;
  std::string out;
  std::string err;
};

Captured run_capture(const std::vector<std::string>& argv, double timeout_s);

// This process's environment as "KEY=VALUE" strings.
std::vector<std::string> current_environment();

}  // namespace gilhost
