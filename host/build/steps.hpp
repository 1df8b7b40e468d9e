#pragma once
// The steps of one build (configure, compile, install, smoke test): each command's output into the
// build's log, its last lines kept for a failure, and the progress on stderr: a live line on a terminal,
// else one line per step.
#include <cstdio>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "util/fd.hpp"
#include "util/subprocess.hpp"

namespace gilhost {

struct StepOutcome {
  ProcessResult process;
  std::deque<std::string> tail;  // the step's last lines of output
  bool ok() const { return process.exit_code == 0; }
  // "exited with status 2", "was killed by signal 9".
  std::string how_it_ended() const;
};

class StepRunner {
 public:
  static constexpr std::size_t kTailLines = 20;

  // Opens (appends to) the log; throws std::system_error. Progress goes to `progress` (stderr), live
  // when `tty`.
  StepRunner(const std::string& log_path, int total_steps, bool tty, std::FILE* progress = stderr);
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // Runs the next step. Each line of output goes to the log and the tail, then to `on_line`, whose
  // answer (when not empty) is shown beside the step's name on a terminal ("42% (123/290)").
  StepOutcome run(const std::string& name, const std::vector<std::string>& argv, const ProcessOptions& options,
                  const std::function<std::string(const std::string& line)>& on_line = {});
  // A line for the user ("gilhost: " before it) and for the log.
  void note(const std::string& line);
  const std::string& log_path() const { return log_path_; }

 private:
  void log(const std::string& text);
  void show(const std::string& status, double elapsed_s, bool final_line);

  std::string log_path_;
  UniqueFd log_;
  int total_;
  int index_ = 0;
  bool tty_;
  std::FILE* progress_;
  std::string step_;
};

}  // namespace gilhost
