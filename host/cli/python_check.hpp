#pragma once
// The Python side of an experiment, checked without running the user's code: each script compiles on each
// selected build, and each function a case names is bound at the top level of its script or module. Each
// build's own executable parses the file (ast + compile) in a small checker and answers in JSON.
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "discover/interpreter.hpp"

namespace gilhost {

struct PythonSyntaxError {
  int line = 0;
  int column = 0;
  std::string message;
};

// What the checker says of one file on one build.
struct CheckerAnswer {
  std::string file;                        // the script, or the file the module was found in
  std::string error;                       // the file could not be found or read
  std::optional<PythonSyntaxError> syntax;
  std::vector<std::string> functions;      // def / async def at the top level
  std::vector<std::string> missing;        // names asked for that nothing at the top level binds
};

// Throws std::runtime_error when `json` is not a checker's answer.
CheckerAnswer parse_checker_answer(const std::string& json);

// Every problem found, each a located line ("bad.py:3:7: SyntaxError: ... (on 3.9.18)",
// "x.toml:12:8: call = \"nope\": x.py has no top-level function 'nope' (functions: a, b)"); empty: all good.
std::vector<std::string> check_python_side(const Experiment& ex, const std::vector<Interpreter>& builds);

// `run`'s check before it runs: only the names of calls and setups, each file asked of the first build
// that runs its cases (a syntax error is left to the runs, which report it per build). The same located
// lines as check_python_side; empty when every name is bound, or no case names a function.
std::vector<std::string> check_function_names(const Experiment& ex, const std::vector<Interpreter>& builds);

}  // namespace gilhost
