#include "results/identity.hpp"

#include <variant>

namespace gilhost {

const std::string& line_session_id(const ResultsLine& line) {
  if (const auto* meta = std::get_if<MetaRecord>(&line)) return meta->session_id;
  if (const auto* run = std::get_if<RunRecord>(&line)) return run->origin.session_id;
  return std::get<SkipRecord>(line).origin.session_id;
}

bool SeenLines::first_sight(const ResultsLine& line) {
  const std::string& id = line_session_id(line);
  if (id.empty()) return true;
  if (std::holds_alternative<MetaRecord>(line)) return metas_.insert(id).second;
  const RecordOrigin& o = std::holds_alternative<RunRecord>(line) ? std::get<RunRecord>(line).origin
                                                                  : std::get<SkipRecord>(line).origin;
  if (!o.index) return true;
  return records_.emplace(id, *o.index).second;
}

}  // namespace gilhost
