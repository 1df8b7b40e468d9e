#pragma once
// What `gilhost build` is asked to do, and whether the asking makes sense (before anything runs).
#include <string>
#include <vector>

namespace gilhost {

struct BuildRequest {
  std::string source;  // tarball, URL or source tree
  bool free_threaded = false;
  std::vector<std::string> configure_args;  // after --
  int jobs = 0;                             // make -j; 0: the cores we may use
  std::string label;                        // empty: derived (build/label)
  std::string sha256;                       // empty: not checked
  bool force = false;
};

struct BuildCommand {
  bool list = false;   // --list
  bool json = false;   // --list --json
  std::string remove;  // --remove LABEL
  BuildRequest request;
};

// Empty when the command can go ahead, else one line saying what is wrong.
std::string command_problem(const BuildCommand& command);
// The CPU cores this process may run on (its affinity mask), at least 1.
int available_cores();

}  // namespace gilhost
