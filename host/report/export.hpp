#pragma once
// Machine-readable exports of a report: the summary cells as JSON, the runs as CSV.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/model.hpp"

namespace gilhost {

// {"format": "gilhost-summary", "version": 1, "files": [...], "experiments": [{..., "cells": [...]}]}
nlohmann::json summary_json(const ReportModel& model);

// One row per run (warm-ups included, flagged), the main numeric fields; RFC 4180: CRLF line ends,
// fields with a comma, quote or line break in double quotes, quotes doubled.
std::string runs_csv(const ReportModel& model);
std::string csv_field(const std::string& text);
const std::vector<std::string>& csv_columns();

}  // namespace gilhost
