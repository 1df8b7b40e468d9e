#pragma once
// The report as Markdown (GitHub flavoured): for a README, an issue, or $GITHUB_STEP_SUMMARY.
#include <string>

#include "report/model.hpp"

namespace gilhost {

std::string render_markdown(const ReportModel& model);
// A table cell's text: pipes, line breaks and HTML-like text escaped.
std::string markdown_escape(const std::string& text);

// Shared with the HTML page: the grid cell's text, the params line, a skip line.
std::string grid_cell_text(const Cell& cell);
std::string params_text(const nlohmann::json& params);

}  // namespace gilhost
