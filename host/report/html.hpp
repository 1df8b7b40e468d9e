#pragma once
// The report as one self-contained HTML page: inline CSS and SVG, no scripts, no external resources.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.hpp"

namespace gilhost {

std::string render_html(const ReportModel& model);
// The same page, a part at a time to `out` (a section's parts, one case's charts at a time): with a model
// read without timelines (ReadOptions), the thread lanes are read again run by run from the file, so
// memory holds the light model and one case's charts, never the whole page.
void write_html(const ReportModel& model, const std::function<void(std::string_view)>& out);
std::string html_escape(const std::string& text);
// A coordinate or length in an SVG drawing: one decimal.
std::string svg_number(double v);

// Round axis ticks from 0 to at least `max` (about `target` of them, steps of 1, 2 or 5 x 10^k).
std::vector<double> nice_ticks(double max, int target = 5);

}  // namespace gilhost
