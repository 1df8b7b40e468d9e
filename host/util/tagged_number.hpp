#pragma once
// Numbers JSON cannot carry, as the runner writes them (docs/results-format.md): a NaN or an infinity as
// {"$float": "nan" | "inf" | "-inf"}, an integer outside the signed 64-bit range as {"$int": "<digits>"}.
// nlohmann would refuse NaN literals and read big integers as doubles, so they never travel raw.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gilhost {

// The text of a tagged number ("nan", "-inf", "1000...0"), or nullopt when `v` is not one.
std::optional<std::string> tagged_number_text(const nlohmann::json& v);

// `v` with every NaN and infinity in it as its tag ({"$float": "nan"}), for JSON text: values gilhost holds
// itself, such as a case's params from TOML (`x = nan`), which dump() would otherwise write as null.
nlohmann::json tag_non_finite(const nlohmann::json& v);

// A tagged number as a double (NaN, ±infinity, the nearest double or ±infinity for a big integer); any
// other value unchanged.
nlohmann::json decode_tagged_number(const nlohmann::json& v);

// Compact JSON for people: tagged numbers bare (nan, inf, -inf; a big integer's digits, or 1.235e400
// when it has more than 20), everything else as dump() writes it.
std::string display_json(const nlohmann::json& v);

}  // namespace gilhost
