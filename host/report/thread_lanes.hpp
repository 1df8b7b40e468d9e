#pragma once
// The HTML report's thread charts (inline SVG, no scripts): per case, a bar per build of where its Python
// threads' time went, stacked by state; and, folded under <details>, the lanes of the median run of each
// build: one lane per thread, a rect per stretch of one state, over a time axis, with the states' legend.
// Each element carries a class (and data-state / data-tid) so tests and the browser test can find it.
#include <cstdint>
#include <string>
#include <vector>

#include "report/model.hpp"
#include "report/threads.hpp"

namespace gilhost {

constexpr std::size_t kMaxThreadLanes = 16;  // lanes drawn per run; the rest are counted ("and 4 more threads")
constexpr double kMinSpanPx = 2;  // stretches narrower are gathered: keeps a page of long runs small

// A state's colour, the same in every thread chart.
const char* thread_state_color(ThreadState state);

// Spans as drawn: neighbours of one state joined, and spans shorter than `min_ns` (kMinSpanPx pixels) gathered
// until they reach it, then drawn as one part per state in proportion to its time there, the state drawn just
// before first: a lane keeps its shares and stays about one rect per kMinSpanPx pixels whatever the timeline.
std::vector<StateSpan> drawn_spans(const std::vector<StateSpan>& spans, double min_ns);

// One run's threads as lanes: Python threads first, at most kMaxThreadLanes.
std::string thread_lanes_svg(const RunRecord& run);
// Stacked bars of median shares, one per row, with a legend; `title` for the svg's tooltip.
struct SharesRow {
  std::string label;  // a build, or "case @ build"
  const ThreadShares* shares;
};
std::string shares_svg(const std::vector<SharesRow>& rows, const std::string& title);
// The case's stacked bars of median shares, one per build with thread states.
std::string thread_shares_svg(const Section& section, const std::string& case_name);
// Both for one case, as the HTML page shows them under its wall-time and RSS charts ("" without thread states).
std::string thread_charts_html(const Section& section, const std::string& case_name);

}  // namespace gilhost
