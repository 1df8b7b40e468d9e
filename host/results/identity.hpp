#pragma once
// The identity of a results line (record.hpp, RecordOrigin): which session wrote it, and where in the
// session. Readers use it to count each run once however often a file is read or merged, and to tell
// interleaved sessions apart.
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "results/record.hpp"

namespace gilhost {

// The session id a line carries ("" in files written before identities).
const std::string& line_session_id(const ResultsLine& line);

// Lines seen so far, by identity.
class SeenLines {
 public:
  // False when a line with this identity was seen before (the same meta, or the same session and
  // index); lines without an identity are always new (older files: nothing to compare).
  bool first_sight(const ResultsLine& line);

 private:
  std::set<std::string> metas_;
  std::set<std::pair<std::string, std::int64_t>> records_;
};

}  // namespace gilhost
