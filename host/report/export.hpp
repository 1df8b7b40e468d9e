#pragma once
// Machine-readable exports of a report: the summary cells and comparisons as JSON, the runs as CSV.
// The report's edge: the only place in report/ that writes JSON (records through results/record_json).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.hpp"
#include "report/model.hpp"

namespace gilhost {

// {"format": "gilhost-summary", "version": 1, "files": [...], "experiments": [{..., "cells": [...]}]}
nlohmann::json summary_json(const ReportModel& model);
nlohmann::json comparison_json(const Comparison& comparison);
// null for a ratio that is not one.
nlohmann::json to_json(const RatioStat& ratio);

// One row per run (warm-ups included, flagged), the main numeric fields; RFC 4180: CRLF line ends,
// fields with a comma, quote or line break in double quotes, quotes doubled.
std::string runs_csv(const ReportModel& model);
// The same, a row at a time to `out`.
void write_runs_csv(const ReportModel& model, const std::function<void(std::string_view)>& out);
std::string csv_field(const std::string& text);
const std::vector<std::string>& csv_columns();

}  // namespace gilhost
