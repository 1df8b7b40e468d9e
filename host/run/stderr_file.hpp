#pragma once
// A failed run's whole stderr, kept in a file beside the results file (RESULTS.stderr/CASE@BUILD-ROUND.txt)
// so a report can point at it while showing only the traceback's last lines.
#include <string>

#include "results/record.hpp"

namespace gilhost {

// The file's name for `r`: its case, build and round, with anything but [A-Za-z0-9._=@+-] as '_'.
std::string stderr_file_name(const RunRecord& r);
// Writes r's stderr into `dir` (made when missing); the file's path, or "" when it could not be written.
std::string write_stderr_file(const std::string& dir, const RunRecord& r);

}  // namespace gilhost
