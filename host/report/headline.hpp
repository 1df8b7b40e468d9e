#pragma once
// The headline views an experiment file declares ([[view]], config/view.hpp): one number per build, beside
// the article's figure. Built once here; the renderers only emit them.
#include <optional>
#include <string>
#include <vector>

#include "config/view.hpp"
#include "report/interval.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"

namespace gilhost {

struct HeadlineValue {
  std::string build;
  std::optional<double> value;  // nullopt: the case did not run there, or its result lacks the key
  // The value with its n and interval (report/interval): a ratio's is Hodges-Lehmann (paired by round where
  // the runs pair), a value's or GIL wait's the median of its runs. nullopt with `value`.
  std::optional<Estimate> estimate;
  // A ratio view's value says a direction (its 95 % interval excludes 1); false: "no difference".
  bool supported = true;
  std::string text;             // "3.10x (2.9–3.3) n=6", "no difference (0.9–2.6, n=3)", "12.5 % (11–14) n=5", "-"
};

struct Headline {
  ViewSpec spec;
  std::string unit;  // as shown: the spec's, "x" for a ratio without one
  std::string how;   // how the number is computed, one line
  std::vector<HeadlineValue> values;  // one per build of the section, in its order
  std::string article_text;           // "3.10x" or ""
};

std::vector<Headline> build_headlines(const Summary& summary, const std::vector<ViewSpec>& views);
// Views down, builds across, the article last.
Table headlines_table(const std::vector<Headline>& headlines, const std::vector<std::string>& builds);
// "3.10x", "12.5 %", "840 rps".
std::string headline_number(double value, const std::string& unit);

}  // namespace gilhost
