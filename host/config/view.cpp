#include "config/view.hpp"

namespace gilhost {

const char* view_kind_name(ViewKind kind) {
  switch (kind) {
    case ViewKind::ratio: return "ratio";
    case ViewKind::value: return "value";
    case ViewKind::gil_wait: return "gil_wait";
  }
  return "value";
}

std::optional<ViewKind> parse_view_kind(const std::string& name) {
  for (ViewKind k : {ViewKind::ratio, ViewKind::value, ViewKind::gil_wait})
    if (name == view_kind_name(k)) return k;
  return std::nullopt;
}

nlohmann::json view_to_json(const ViewSpec& v) {
  nlohmann::json j = {{"title", v.title}, {"kind", view_kind_name(v.kind)}, {"a", v.a}, {"key", v.key}, {"unit", v.unit}};
  if (v.kind == ViewKind::ratio) j["b"] = v.b;
  if (v.article) j["article"] = *v.article;
  return j;
}

}  // namespace gilhost
