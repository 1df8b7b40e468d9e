#pragma once
// The experiment model: what a TOML file asks for, after profiles are applied and sweeps expanded.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/enums.hpp"
#include "config/extract.hpp"
#include "config/source_pos.hpp"
#include "config/view.hpp"
#include "util/version.hpp"

namespace gilhost {

// One [[case.expect]] entry: conditions (python, free_threaded, gil) and checks.
struct Expectation {
  std::optional<VersionSpec> python;
  std::optional<bool> free_threaded;
  // Runs with a GIL from the start: a GIL build, or a free-threaded one with its GIL forced on.
  std::optional<bool> gil;
  std::string key;                                          // dotted path into a dict result
  std::vector<std::pair<CompareOp, nlohmann::json>> result_checks;  // (operator, value)
  std::optional<std::string> status;
  std::optional<int> exit_code;
  std::optional<std::string> error;
  std::optional<std::string> stdout_contains;
  std::optional<std::string> stderr_contains;
  std::string note;
  SourcePos where;

  bool applies(const Version& v, bool is_free_threaded, bool with_gil) const;
  // Whether this expectation says what the run's status should be (else "ok" is implied).
  bool constrains_status() const { return status || exit_code || error; }
  // "python <3.10: result < 4000000" — for tables and failure messages.
  std::string describe() const;
};

// What a case needs of a build; on any other build the case is skipped, with `because` as the reason.
struct CaseRequirement {
  std::optional<VersionSpec> python;
  std::string because;  // "concurrent.futures.InterpreterPoolExecutor is new in 3.14"
};

struct Case {
  std::string name;       // expanded: "threads[workers=2]"
  std::string base_name;  // as written: "threads"
  CaseMode mode = CaseMode::call;
  std::string function;
  std::string setup;   // call mode: a function of the same module run before the clock, with the same kwargs
  SourcePos function_where;  // the `call` value, for gilhost check's errors
  SourcePos setup_where;     // the `setup` value, the same
  std::string script;  // absolute; empty when `module` names what runs
  std::string module;  // "pkg.mod": imported by name (call) or run as `python -m` runs it (main)
  nlohmann::json params = nlohmann::json::object();  // merged: [params], case params, sweep values
  nlohmann::json sweep_values = nlohmann::json::object();
  std::vector<std::string> argv;  // main mode, {name} already substituted
  int subinterpreters = 0;
  SubinterpreterGil gil = SubinterpreterGil::own;
  std::string show;
  CaseRequirement requires;
  std::vector<Expectation> expects;
  // Numbers its stdout holds, made metrics: [experiment.extract], then [case.extract], then --extract.
  std::vector<ExtractSpec> extract;
  // The metric ratios between builds compare instead of the wall time ("" : the wall time), and what it
  // is in words: a module that chooses its own loop count (timeit) makes its wall time meaningless.
  std::string compare{};
  std::string compare_what{};
  SourcePos where;
};

struct Profile {
  std::optional<int> repeat, warmup;
  std::optional<double> timeout_s;
  std::optional<double> precision;  // config/precision: 0 for off
  nlohmann::json params = nlohmann::json::object();
  std::vector<std::string> cases;
};

struct Experiment {
  std::string name;
  std::string description;
  std::string path;    // the TOML file
  std::string script;  // absolute
  std::string module;  // instead of a script: a module on sys.path
  std::vector<std::string> interpreters{"all"};
  int repeat = 3;
  int warmup = 0;
  double timeout_s = 300;
  double cell_budget_s = 20;  // stop repeating a cell once its runs took this long; 0: no budget
  // The precision target as written (file, profile, --precision; 0: off), nullopt where none was.
  std::optional<double> precision;
  // `repeat` was written (file, profile, --repeat): without a target written too, exactly that many rounds.
  bool repeat_written = false;
  int sample_interval_ms = 10;
  bool thread_states = true;  // sample every thread's state (measure/thread_states); --no-thread-states
  std::string baseline;
  std::map<std::string, std::string> env;
  nlohmann::json article = nlohmann::json::object();
  nlohmann::json params = nlohmann::json::object();
  nlohmann::json file_params = nlohmann::json::object();  // [params] as the file wrote them: the article's sizes
  std::string profile;  // the one applied, if any
  nlohmann::json param_overrides = nlohmann::json::object();  // --param KEY=VALUE
  std::vector<std::string> case_globs;                       // --case GLOB
  std::vector<std::string> extract_options;                  // --extract NAME=REGEX, as given
  std::vector<std::string> profile_names;
  std::vector<Case> cases;
  std::vector<ViewSpec> views;  // [[view]], in file order

  const Case* find_case(const std::string& case_name) const;
  // The target rounds are added for past `repeat` (run/precision), 0 for none: the one written, else the
  // default unless `repeat` was written (a count asked for is run exactly, as before).
  double precision_target() const;
  nlohmann::json to_json() const;  // recorded in the results file's header
};

}  // namespace gilhost
