#pragma once
// The syntax of a document format (Markdown, HTML), so that the parts of a section both formats show the
// same way are walked once, in one order (like hyperfine's MarkupExporter): the details table, the
// expectations not met, the skips, what the article reported, the notes.
#include <string>
#include <vector>

#include "report/model.hpp"
#include "report/table.hpp"

namespace gilhost {

class Markup {
 public:
  virtual ~Markup() = default;
  virtual std::string escape(const std::string& text) const = 0;
  virtual std::string heading(const std::string& text) const = 0;  // a section's sub-heading
  virtual std::string table(const Table& table, const std::string& css_class) const = 0;
  virtual std::string paragraph(const std::string& markup, const std::string& css_class = "") const = 0;
  virtual std::string note(const std::string& text) const = 0;
  virtual std::string list(const std::vector<std::string>& items, const std::string& css_class) const = 0;
  virtual std::string strong(const std::string& markup) const = 0;
  virtual std::string quote(const std::string& text) const = 0;  // a name in running text
  virtual std::string verdict(bool ok) const = 0;                // ✓ / ✗
  virtual std::string all_held_mark() const = 0;                 // before "Every expectation held."
  // Charts (HTML draws them; Markdown has only the tables).
  virtual std::string headline_chart(const Section&, const Headline&) const { return ""; }
  virtual std::string scaling_chart(const Section&, const Scaling&) const { return ""; }
};

// The headline views ([[view]]) and the scaling views: a table each, the charts where the format draws.
std::string render_views(const Section& section, const Markup& markup);

// The details table, the readings, expectations not met (or that every one held), skips, the article's table,
// notes.
std::string render_findings(const Section& section, const Markup& markup);
// Its parts, for a format that places them apart (the HTML page puts the answer first).
std::string render_details(const Section& section, const Markup& markup);
std::string render_readings(const Section& section, const Markup& markup);
std::string render_expectations(const Section& section, const Markup& markup);
std::string render_skips(const Section& section, const Markup& markup);
std::string render_article(const Section& section, const Markup& markup);
// Unstable cells (!), unknown GIL waits (?), cells short of the precision target: each with its why.
std::string render_evidence(const Section& section, const Markup& markup);

}  // namespace gilhost
