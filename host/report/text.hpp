#pragma once
// The report for the terminal: what `gilhost run` prints after its runs, and `gilhost report`.
#include <string>

#include "report/model.hpp"

namespace gilhost {

std::string render_text(const ReportModel& model);

}  // namespace gilhost
