#pragma once
// The report for the terminal: what `gilhost run` prints after its runs, and `gilhost report`.
#include <string>

#include "report/model.hpp"

namespace gilhost {

struct TextOptions {
  std::size_t width = 0;     // fit tables to this many columns (report/fit); 0: everything, unabridged
  std::string results_file;  // where the full report is (named where readings are left out)
};

std::string render_text(const ReportModel& model, const TextOptions& options = {});

}  // namespace gilhost
