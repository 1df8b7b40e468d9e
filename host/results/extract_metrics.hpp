#pragma once
// [case.extract] applied to a finished run: each regex tried on the lines of the captured stdout, the
// first match's group parsed as a number and recorded as a metric, like gilhost.metric(name, value).
// What did not work out is said in the run's note; the run's status is its own.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/extract.hpp"
#include "results/record.hpp"

namespace gilhost {

// A number as scripts print it: "12", "-2", "+0.25", "1.5", ".5", "1e3", "2.5E-3", "1,234,567" (commas
// between groups of three digits). Integers stay integers (within 64 bits), the rest are doubles; nullopt
// for anything else ("1.5x", "1,5", "inf", "").
std::optional<nlohmann::json> parse_printed_number(std::string_view text);

struct Extracted {
  nlohmann::json metrics = nlohmann::json::object();  // name -> number
  std::vector<std::string> notes;                     // "extract: ..." for each name not found or not a number
};

// `stdout_bytes`: the stream's full size; more than the text holds means its middle was not kept.
Extracted extract_metrics(const std::vector<ExtractSpec>& specs, const std::string& stdout_text, std::int64_t stdout_bytes);

// Into the record: each number joins r.metrics (a metric the script reported itself under the name is
// kept, and the note says so), and the notes join r.note.
void apply_extracts(const std::vector<ExtractSpec>& specs, RunRecord& r);

}  // namespace gilhost
