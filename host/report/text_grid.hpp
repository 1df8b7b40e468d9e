#pragma once
// The terminal's condensed grid and readings: build labels shortened where that stays unambiguous, the
// builds in blocks that fit the width, and the readings one line per kind.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "report/model.hpp"

namespace gilhost {

// "3.14.7t" -> "3.14t", "3.12.1 (exec)" -> "3.12 (exec)": each label without its patch version, unless
// two would then read alike (then all stay as they are).
std::vector<std::string> short_build_labels(const std::vector<std::string>& labels);

// The grid as tables of the case column and as many builds as fit `width` (one at least), each fitted
// (report/fit); width 0: one table, labels in full.
std::vector<Table> grid_blocks(const Grid& grid, std::size_t width);

// One line per kind of reading, in first-seen order: "lock convoy: … — a @ 3.12, b @ 3.13 and 2 more",
// the text of the first cell of the kind, at most `cells` cells named.
std::vector<std::string> group_readings(const std::vector<Reading>& readings, std::size_t cells);
// The readings of each kind, kinds in first-seen order (pointers into `readings`).
std::vector<std::pair<ReadingRule, std::vector<const Reading*>>> readings_by_rule(const std::vector<Reading>& readings);
std::size_t count_rules(const std::vector<Reading>& readings);  // how many kinds

}  // namespace gilhost
