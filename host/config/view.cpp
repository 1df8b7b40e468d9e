#include "config/view.hpp"

namespace gilhost {

const char* view_kind_name(ViewKind kind) { return kind == ViewKind::ratio ? "ratio" : "value"; }

std::optional<ViewKind> parse_view_kind(const std::string& name) {
  if (name == "ratio") return ViewKind::ratio;
  if (name == "value") return ViewKind::value;
  return std::nullopt;
}

nlohmann::json view_to_json(const ViewSpec& v) {
  nlohmann::json j = {{"title", v.title}, {"kind", view_kind_name(v.kind)}, {"a", v.a}, {"key", v.key}, {"unit", v.unit}};
  if (v.kind == ViewKind::ratio) j["b"] = v.b;
  if (v.article) j["article"] = *v.article;
  return j;
}

}  // namespace gilhost
