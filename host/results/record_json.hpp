#pragma once
// The records as JSON: the only place that knows the field names of a results file.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "results/record.hpp"

namespace gilhost {

// A line that is a JSON object but no record this gilhost can use: says what is wrong and, where one
// field is to blame, which ("a run record without \"case\", \"wall_ns\"").
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The results format this gilhost writes (the meta record's "format"), and the oldest it reads.
constexpr int kResultsFormat = 1;
constexpr int kOldestResultsFormat = 1;

nlohmann::json to_json(const RunRecord& record);
nlohmann::json to_json(const SkipRecord& record);
nlohmann::json to_json(const MetaRecord& record);
nlohmann::json to_json(const ResultsLine& line);
nlohmann::json to_json(const MachineRecord& machine);
nlohmann::json to_json(const BuildRecord& build);

// Throw RecordError: a newer or unknown format, an unknown type, a missing required field, a field of
// the wrong kind. Fields a record may lack (older files) read as their defaults.
ResultsLine line_from_json(const nlohmann::json& line);
RunRecord run_from_json(const nlohmann::json& run);
MachineRecord machine_from_json(const nlohmann::json& machine);
// The report's view of an experiment's JSON (Experiment::to_json), the document kept whole.
ExperimentInfo experiment_info(const nlohmann::json& document);

}  // namespace gilhost
