#include "run/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cli/plain_text.hpp"
#include "config/precision.hpp"
#include "report/fit.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::optional<double> eta_seconds(const Progress& p) {
  if (p.done == 0) return std::nullopt;
  // The finished runs' mean, for a cell that has not run yet.
  double seconds = 0;
  int runs = 0;
  for (const auto& [cell, observed] : p.observed) {
    runs += observed.first;
    seconds += observed.second;
  }
  const double mean = runs > 0 ? seconds / runs : (p.elapsed_s - p.run_elapsed_s) / p.done;
  if (!p.run || !p.rest_end) return std::max(0.0, mean * (p.total - p.done) - p.run_elapsed_s);
  auto expected = [&](const PlannedRun& r) {
    const auto it = p.observed.find({r.c, r.interp});
    return it != p.observed.end() && it->second.first > 0 ? it->second.second / it->second.first : mean;
  };
  // This run's rest (at least nothing), then each run still planned at its own cell's pace.
  double left = std::max(0.0, expected(*p.run) - p.run_elapsed_s);
  for (const PlannedRun* r = p.run + 1; r < p.rest_end; ++r) left += expected(*r);
  return left;
}

std::string progress_line(const Progress& p) {
  // With a precision target the count is open-ended: rounds are added while cells are short of it.
  const std::string more = p.precision > 0 ? "+" : "";
  std::string line = "[" + std::to_string(p.done + 1) + "/" + std::to_string(p.total) + more + "] " + p.run->c->name +
                     " @ " + p.run->interp->label + (p.run->warmup ? " warm-up" : "");
  line += "  " + format_duration(p.run_elapsed_s) + " of " + fmt::format("{:g}s", p.timeout_s) + " timeout";
  line += " · total " + format_duration(p.elapsed_s);
  // The runs still to come at the pace their cells have run so far: with a target, the runs known so
  // far, so at least that.
  if (const auto eta = eta_seconds(p)) line += ", ETA " + format_duration(*eta) + more;
  if (p.precision > 0) line += " (" + std::to_string(p.min_rounds) + "+ rounds, to " + precision_text(p.precision) + ")";
  return line;
}

void print_progress(const Progress& p) {
  // Cut to the terminal's width: a line that wrapped could not be redrawn in place.
  winsize ws{};
  const std::size_t width = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
  // Written with fprintf, past std::cerr's ASCII filter: a non-UTF-8 terminal gets ASCII here too.
  const std::string line = truncate_display(escape_controls(progress_line(p), true), width);
  static const bool utf8 = locale_is_utf8();  // the locale does not change during a run
  std::fprintf(stderr, "\r\033[K%s", (utf8 ? line : to_ascii(line)).c_str());
  std::fflush(stderr);
}

void clear_progress() { std::fprintf(stderr, "\r\033[K"); }

}  // namespace gilhost
