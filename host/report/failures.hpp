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
// Why one failed run failed, in words.
std::string failure_cause(const RunRecord& r);
// The last `n` non-empty lines of `text`.
std::vector<std::string> last_lines(const std::string& text, std::size_t n);

// Markdown inline code / a fenced block for text from a script: fences longer than any backtick run in
// it, control characters escaped.
std::string markdown_code_span(const std::string& text);
std::string markdown_code_block(const std::vector<std::string>& lines, const std::string& indent);

std::string failures_text(const CellFailures& f);
std::string failures_markdown(const CellFailures& f);
std::string failures_html(const CellFailures& f);
nlohmann::json failures_json(const CellFailures& f);

}  // namespace gilhost
