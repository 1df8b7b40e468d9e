#pragma once
// Terminal tables: the cases x interpreters grid, the per-cell details, failures and skips.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/summary.hpp"

namespace gilhost {

// A plain text table whose columns size themselves to their widest cell (UTF-8 aware).
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> right_align = {});
  void add_row(std::vector<std::string> row);
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

struct ReportContext {
  std::string description;
  nlohmann::json machine;  // machine_metadata()
  nlohmann::json article;  // [experiment.article]
  std::string results_path;
  bool details = true;
};

// "0.312 s ±1.2%"
std::string format_wall(const Stats& s);
// A cell's "wall median", "min–max" and "cpu/wall" for the details tables; "-" where no run has a wall
// time (its case never started, e.g. a subinterpreter that could not be created).
std::array<std::string, 3> timing_texts(const Cell& cell);
std::string render_report(const Summary& summary, const ReportContext& context);

}  // namespace gilhost
