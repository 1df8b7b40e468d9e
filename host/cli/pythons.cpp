#include <iostream>

#include "cli/pythons.hpp"

#include "cli/commands.hpp"
#include "discover/selector.hpp"
#include "report/fit.hpp"
#include "report/table.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::string wrap_words(const std::string& text, std::size_t width, std::size_t lead, std::size_t indent) {
  std::string out, line(lead, ' ');
  bool empty = true;  // no word on the line yet
  for (const auto& word : split(text, ' ')) {
    if (word.empty()) continue;
    if (!empty && width > 0 && display_width(line) + 1 + display_width(word) > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line;
}

std::string pythons_table_text(const std::vector<Interpreter>& found, std::size_t width) {
  // On a terminal it fits: the version (the label says it) and the source go first, then paths are cut.
  Table t;
  t.columns = {Column("label"),  Column("version").dropped_at(2), Column("build"), Column("mode"), Column("source").dropped_at(1),
               Column("executable"), Column("libpython / why not")};
  std::string reasons;  // on a terminal, each unusable build's reason whole, after the table
  for (const auto& i : found) {
    std::string why = "unsupported: " + i.unsupported_reason;
    if (!i.supported && width > 0) {
      reasons += wrap_words(i.label + " is unusable: " + i.unsupported_reason, width, 2, 4) + "\n";
      why = "unusable (below)";
    }
    t.add_row({i.label, i.version_full, i.free_threaded ? "free-threaded" : "GIL", i.supported ? i.mode() : "-",
               i.source, i.executable, !i.supported ? why : (i.shared ? i.libpython : "no shared libpython: exec mode")});
  }
  return render_text_table(t, width) + reasons;
}

int cmd_pythons(const CommonOptions& o, bool as_json) {
  ProbeCache cache(ProbeCache::default_path(), !o.no_cache);
  Discovery d = discover_all(o, cache);
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& i : d.found) j.push_back(i.to_json());
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const std::size_t width = output_width(0);
  std::cout << pythons_table_text(d.found, width);
  for (const auto& p : d.problems) {
    const std::string where = "  not usable: " + p.executable + " (" + p.source + "):";
    const bool one_line = width == 0 || display_width(where) + 1 + display_width(p.reason) <= width;
    std::cout << where << (one_line ? " " + p.reason : "\n" + wrap_words(p.reason, width, 4, 4)) << "\n";
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
