#pragma once
// The SVG charts of the views (report/headline, report/scaling) and of effective parallelism, for the HTML
// report: inline, no scripts. Each element carries a class (and data-build) so a browser test can find it.
#include <string>

#include "report/model.hpp"

namespace gilhost {

// A label as a chart shows it: itself, or cut to `max` bytes with its ellipsis (at a character boundary).
std::string chart_label(const std::string& label, std::size_t max);
// The content of an SVG <text>: the label as chart_label shows it, escaped, with the full label as its
// tooltip (<title>) where it was cut.
std::string svg_label(const std::string& label, std::size_t max);

// An SVG drawing's opening tag: its class, size and accessible label.
std::string svg_open(const std::string& css, int width, int height, const std::string& label);
// Bars per build, the article's figure marked.
std::string headline_svg(const Section& section, const Headline& headline);
// Speedup against N, one line per build, the ideal line and the core count marked.
std::string scaling_svg(const Section& section, const Scaling& scaling);
// CPU / wall per case and build: 1 is one core busy (the GIL's ceiling), the cores line the machine's.
std::string parallelism_svg(const Section& section);

}  // namespace gilhost
