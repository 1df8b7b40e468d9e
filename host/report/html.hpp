#pragma once
// The report as one self-contained HTML page: inline CSS and SVG, no scripts, no external resources.
#include <string>
#include <vector>

#include "report/model.hpp"

namespace gilhost {

std::string render_html(const ReportModel& model);
std::string html_escape(const std::string& text);

// Round axis ticks from 0 to at least `max` (about `target` of them, steps of 1, 2 or 5 x 10^k).
std::vector<double> nice_ticks(double max, int target = 5);

}  // namespace gilhost
