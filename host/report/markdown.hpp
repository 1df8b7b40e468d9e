#pragma once
// The report as Markdown (GitHub flavoured): for a README, an issue, or $GITHUB_STEP_SUMMARY.
#include <string>

#include "report/model.hpp"

namespace gilhost {

std::string render_markdown(const ReportModel& model);
// A table cell's text: pipes, line breaks and HTML-like text escaped.
std::string markdown_escape(const std::string& text);
// A table in Markdown, every cell escaped.
std::string markdown_table(const Table& table);

}  // namespace gilhost
