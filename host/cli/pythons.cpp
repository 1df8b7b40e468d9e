#include <iostream>

#include "cli/commands.hpp"
#include "discover/selector.hpp"
#include "report/fit.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace gilhost {

int cmd_pythons(const CommonOptions& o, bool as_json) {
  ProbeCache cache(ProbeCache::default_path(), !o.no_cache);
  Discovery d = discover_all(o, cache);
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& i : d.found) j.push_back(i.to_json());
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  // On a terminal it fits: the version (the label says it) and the source go first, then paths are cut.
  Table t;
  t.columns = {Column("label"),  Column("version").dropped_at(2), Column("build"), Column("mode"), Column("source").dropped_at(1),
               Column("executable"), Column("libpython / why not")};
  for (const auto& i : d.found)
    t.add_row({i.label, i.version_full, i.free_threaded ? "free-threaded" : "GIL", i.supported ? i.mode() : "-",
               i.source, i.executable,
               !i.supported ? "unsupported: " + i.unsupported_reason : (i.shared ? i.libpython : "no shared libpython: exec mode")});
  const std::size_t width = output_width(0);
  std::cout << render_text_table(t, width);
  for (const auto& p : d.problems) {
    const std::string where = "  not usable: " + p.executable + " (" + p.source + "):";
    const bool one_line = width == 0 || display_width(where) + 1 + display_width(p.reason) <= width;
    std::cout << where << (one_line ? " " : "\n    ") << p.reason << "\n";
  }
  if (!o.pythons.empty()) {
    Selection sel = select_interpreters(d.found, o.pythons, nullptr);
    std::cout << "\nselected:";
    for (const auto& i : sel.selected) std::cout << " " << i.label;
    std::cout << "\n";
    for (const auto& s : sel.skipped) std::cout << "  " << s.selector << ": " << s.reason << "\n";
  }
  return 0;
}

}  // namespace gilhost
