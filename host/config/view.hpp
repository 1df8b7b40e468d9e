#pragma once
// A headline view an experiment file declares ([[view]]): one number per build that tells the story,
// shown beside what the article reported. The loader reads it from TOML, the experiment records it in the
// results file (view_to_json), and results/record_json reads it back for reports.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gilhost {

enum class ViewKind {
  ratio,  // case a / case b on each build: wall time, or a result key
  value,  // a number of case a's dict result on each build
  gil_wait,  // the share of case a's Python threads' time spent waiting for the GIL (thread states), in %
};
const char* view_kind_name(ViewKind kind);
std::optional<ViewKind> parse_view_kind(const std::string& name);

struct ViewSpec {
  std::string title;
  ViewKind kind = ViewKind::value;
  std::string a, b;  // case names (expanded, "run[mode=single]", or a base name with one case)
  std::string key;   // dotted key of the dict result; "" = wall time (ratio only); none for gil_wait
  std::string unit;  // "%", "ms", "x"; a ratio without a unit is shown as "x"
  std::optional<double> article;  // the article's figure, shown beside ours
};

nlohmann::json view_to_json(const ViewSpec& view);

}  // namespace gilhost
