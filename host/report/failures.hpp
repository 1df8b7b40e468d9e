#pragma once
// The cells whose runs failed, with their cause (the exception and the end of its traceback, a timeout,
// a signal), and the cells whose repeating stopped early (run/cell_stop), as each format shows them under
// the table. One call from each renderer.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/record.hpp"

namespace gilhost {

struct FailedCell {
  std::string case_name, build;
  int failed = 0, runs = 0;            // measured runs that failed, of how many
  std::string cause;                   // "KeyError: 'missing-key'", "timed out after 2 s (the timeout)", ...
  std::vector<std::string> traceback;  // the last lines (at most 6) of the failed run's stderr
  std::string stderr_file;             // the full stderr, beside the results file ("" when none was written)
  bool never_started = false;          // no failed run reached the case: each failed before it (see case_never_started)
};

struct StoppedCell {
  std::string case_name, build, why;  // "2 of 5 runs: the cell's time budget of 20 s was spent"
};

struct CellFailures {
  std::vector<FailedCell> failed;
  std::vector<StoppedCell> stopped;
  bool empty() const { return failed.empty() && stopped.empty(); }
};

// From a section's runs (warm-ups are not counted).
CellFailures collect_failures(const std::vector<RunRecord>& runs);
// A run that failed before its case started: the script did not compile, the module or function could not be
// imported (its traceback passes through the bootstrap's _prepare last), or it has no wall time at all. Its
// wall time is the runner timing nothing, and no report shows it.
bool case_never_started(const RunRecord& r);
// The last `n` lines of a failed run's stderr as a reader wants them: the runner's own frames
// (<gilhost-bootstrap>) left out, and with them the "Traceback" heading where no frame is left (a syntax
// error reads as `python script.py` prints it).
std::vector<std::string> script_traceback(const std::string& stderr_text, std::size_t n);

// Failed cells with the same cause and traceback, together: one syntax error on two builds is one error.
using FailureGroup = std::vector<const FailedCell*>;
std::vector<FailureGroup> group_failures(const std::vector<FailedCell>& failed);

// Why one failed run failed, in words.
std::string failure_cause(const RunRecord& r);
// The last `n` non-empty lines of `text`.
std::vector<std::string> last_lines(const std::string& text, std::size_t n);

// Markdown inline code / a fenced block for text from a script: fences longer than any backtick run in
// it, control characters escaped.
std::string markdown_code_span(const std::string& text);
std::string markdown_code_block(const std::vector<std::string>& lines, const std::string& indent);

// The text report wraps its prose to the terminal; a line that starts with this is printed as it is, the
// mark taken off: a traceback keeps its caret under the code, a path is never broken.
constexpr char kUnwrappedLine = '\x1e';

// Failed cells grouped (one traceback per distinct error, with the builds it happened on), then the cells
// that stopped repeating, grouped by why.
std::string failures_text(const CellFailures& f);
std::string failures_markdown(const CellFailures& f);
std::string failures_html(const CellFailures& f);
nlohmann::json failures_json(const CellFailures& f);

}  // namespace gilhost
