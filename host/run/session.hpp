#pragma once
// gilhost run: the command line's overrides on each experiment file, the interpreters chosen, the plan
// run with progress on the terminal, the results file and the report; Ctrl-C keeps what finished.
#include <string>
#include <vector>

#include "discover/common_options.hpp"

namespace gilhost {

struct RunOptions {
  std::vector<std::string> files;
  std::string module;  // -m MODULE: run as `python -m MODULE` runs it, instead of files
  std::string profile;
  bool quick = false;
  std::string output;
  int repeat = 0, warmup = -1;
  int sample_interval_ms = 0;     // --sample-interval: the sampler's tick (0: the file's)
  double timeout = 0;
  double max_cell_time = -1;      // --max-cell-time: the cell's time budget (0: none; <0: the file's)
  std::string precision;          // --precision: "3%", 0.03, off (config/precision); "": the file's
  bool repeat_failures = false;  // --repeat-failures
  bool show_output = false;
  std::string baseline_python;  // --baseline-python: the build every other is compared with
  bool details = false;     // --details: the per-cell details on a terminal too
  bool no_details = false;
  bool wide = false;
  bool dry_run = false;
  bool force_exec = false;
  bool no_thread_states = false;         // --no-thread-states: the sampler reads no thread's state
  std::string thread_states;             // --thread-states exact|sampled|both|off; "": the default (sampled)
  std::vector<std::string> case_globs;   // --case GLOB
  std::vector<std::string> params;       // --param KEY=VALUE
  std::vector<std::string> extracts;     // --extract NAME=REGEX
  std::vector<std::string> script_args;  // after --: sys.argv[1:] of a script run as __main__
  bool no_lock = false;                  // measure even while another session holds the lock
  std::string cpus;                      // --cpus LIST: every run pinned there
};

// Runs every file in turn; the exit code: 0, 1 (an expectation failed), 2 (a file or selection unusable),
// 130 (interrupted: the files after it are not run).
int cmd_run(const RunOptions& ro, const CommonOptions& co);

}  // namespace gilhost
