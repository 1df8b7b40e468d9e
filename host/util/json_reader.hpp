#pragma once
// A small, strict JSON reader for the runner's spec (runner/runspec): the few hundred bytes every run
// starts from, read without nlohmann's parser, whose first use in a fresh process was 0.1-0.15 ms of
// every run (docs/performance.md). It reads what nlohmann reads, as nlohmann reads it: numbers by their
// kind (a non-negative integer unsigned, one beyond 64 bits a double, an overflowing double an error),
// the last of a repeated key, a leading byte order mark skipped, UTF-8 checked, \u escapes with surrogate
// pairs; nesting up to kMaxJsonDepth.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gilhost {

struct JsonNode {
  enum class Kind { null, boolean, integer, unsigned_integer, real, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  std::int64_t integer = 0;             // a negative integer
  std::uint64_t unsigned_integer = 0;   // a non-negative one
  double real = 0;
  std::string text;
  std::vector<JsonNode> items;
  std::vector<std::pair<std::string, JsonNode>> members;  // in the text's order

  // The member `key` of an object (the last, if repeated), or null.
  const JsonNode* find(std::string_view key) const;
};

// The one value `text` holds (whitespace around it allowed), or nullopt with `error` saying what and where.
std::optional<JsonNode> read_json(std::string_view text, std::string& error);

// The same value as nlohmann holds it (the case's kwargs go on as one).
nlohmann::json to_nlohmann(const JsonNode& node);

}  // namespace gilhost
