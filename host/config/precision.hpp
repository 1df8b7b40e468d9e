#pragma once
// The precision target as written: "3%", "0.03", or 0 / "off" for a fixed number of rounds.
#include <optional>
#include <string>

namespace gilhost {

// The target that `gilhost run` uses unless told otherwise: each cell's median known to within 5 %
// (the half-width of its 95 % interval over the median), run/precision adds rounds until it is.
constexpr double kDefaultPrecision = 0.05;
// The widest target taken: beyond it a "target" says nothing a fixed count of rounds would not.
constexpr double kMaxPrecision = 0.5;

// The fraction `text` names ("3%", "3 %", "0.03"; "0" and "off": 0, a fixed count of rounds), or nullopt
// with `why` said.
std::optional<double> parse_precision(const std::string& text, std::string& why);
// A fraction as the target's text, "±3 %" (0: "off").
std::string precision_text(double fraction);

}  // namespace gilhost
