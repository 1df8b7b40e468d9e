#include "report/state_bar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "report/failures.hpp"
#include "util/strings.hpp"

namespace gilhost {

char state_letter(ThreadState state) {
  switch (state) {
    case ThreadState::cpu: return 'C';
    case ThreadState::runqueue: return 'Q';
    case ThreadState::gil: return 'G';
    case ThreadState::lock: return 'L';
    case ThreadState::io: return 'I';
    case ThreadState::sleep: return 'S';
    case ThreadState::other: return 'O';
  }
  return 'O';
}

std::string state_legend() {
  return "C cpu, Q core (runnable, waiting for one), G GIL, L lock, I I/O, S sleep, O other, ? unknown";
}

namespace {

// What a cell's runs can say of the GIL share: known, unknown alone (coverage), or not told from locks.
enum class GilKnown { yes, gil_unknown, not_told_apart };

GilKnown gil_known(const ThreadShares& s) {
  if (!s.gil_told_apart()) return GilKnown::not_told_apart;
  return s.gil_wait ? GilKnown::yes : GilKnown::gil_unknown;
}

char bar_letter(ThreadState state, GilKnown known) {
  if (state == ThreadState::gil && known != GilKnown::yes) return state_bar::kUnknown;
  if (state == ThreadState::lock && known == GilKnown::not_told_apart) return state_bar::kUnknown;
  return state_letter(state);
}

long whole_percent(double share) { return std::lround(100 * share); }

}  // namespace

std::string state_bar_text(const ThreadShares& s, std::size_t letters) {
  double sum = 0;
  for (ThreadState st : kThreadStates) sum += s.share(st);
  if (sum <= 0 || letters == 0) return std::string(letters, ' ');
  // Largest remainders: each state its whole letters, then the letters left to the largest fractions.
  std::array<std::size_t, kThreadStateCount> count{};
  std::array<double, kThreadStateCount> rest{};
  std::size_t given = 0;
  for (std::size_t k = 0; k < kThreadStates.size(); ++k) {
    const double exact = s.share(kThreadStates[k]) / sum * static_cast<double>(letters);
    count[k] = static_cast<std::size_t>(std::floor(exact));
    rest[k] = exact - std::floor(exact);
    given += count[k];
  }
  while (given < letters) {
    const auto most = static_cast<std::size_t>(std::max_element(rest.begin(), rest.end()) - rest.begin());
    ++count[most];
    rest[most] = -1;
    ++given;
  }
  const GilKnown known = gil_known(s);
  std::string bar;
  for (std::size_t k = 0; k < kThreadStates.size(); ++k) bar += std::string(count[k], bar_letter(kThreadStates[k], known));
  return bar;
}

std::string state_figures_text(const ThreadShares& s) {
  const GilKnown known = gil_known(s);
  const auto figure = [&](const char* name, ThreadState st) { return fmt::format("{} {}", name, whole_percent(s.share(st))); };
  std::vector<std::string> parts{figure("cpu", ThreadState::cpu), figure("core", ThreadState::runqueue)};
  if (known == GilKnown::not_told_apart) {
    parts.push_back(fmt::format("GIL ? · lock ? (together {})", whole_percent(s.share(ThreadState::gil) + s.share(ThreadState::lock))));
  } else {
    parts.push_back(known == GilKnown::yes ? fmt::format("GIL {}", whole_percent(*s.gil_wait)) : "GIL ?");
    parts.push_back(figure("lock", ThreadState::lock));
  }
  parts.push_back(figure("I/O", ThreadState::io));
  parts.push_back(figure("sleep", ThreadState::sleep));
  if (whole_percent(s.share(ThreadState::other)) >= 1) parts.push_back(figure("other", ThreadState::other));
  return join(parts, " · ") + " %";
}

namespace {

// The states with a column: every one but `other`, which shows where some cell has 1 % or more of it.
std::vector<ThreadState> column_states(const std::vector<StateLine>& lines) {
  std::vector<ThreadState> out(kThreadStates.begin(), kThreadStates.end() - 1);
  if (std::any_of(lines.begin(), lines.end(), [](const StateLine& l) { return l.figures.back() != "0"; }))
    out.push_back(ThreadState::other);
  return out;
}

const char* column_title(ThreadState s) {
  switch (s) {
    case ThreadState::cpu: return "cpu";
    case ThreadState::runqueue: return "core";
    case ThreadState::gil: return "GIL";
    case ThreadState::lock: return "lock";
    case ThreadState::io: return "I/O";
    case ThreadState::sleep: return "sleep";
    case ThreadState::other: return "other";
  }
  return "other";
}

// Each state's whole percentage, "?" where the runs cannot tell it; the reason in `why`.
std::vector<std::string> figures_of(const ThreadShares& s, std::string& why) {
  const GilKnown known = gil_known(s);
  std::vector<std::string> out;
  for (ThreadState st : kThreadStates) {
    const bool unknown = bar_letter(st, known) == state_bar::kUnknown;
    out.push_back(unknown ? "?" : std::to_string(whole_percent(st == ThreadState::gil ? *s.gil_wait : s.share(st))));
  }
  const std::string reason = s.gil_unknown_why.empty() ? "unknown" : s.gil_unknown_why;
  if (known == GilKnown::not_told_apart)
    why = fmt::format("GIL and lock not told apart (together {} %): {}", whole_percent(s.share(ThreadState::gil) + s.share(ThreadState::lock)), reason);
  else if (known == GilKnown::gil_unknown)
    why = "GIL: " + reason;
  return out;
}

}  // namespace

std::vector<StateLine> state_lines(const Summary& sum) {
  std::vector<StateLine> out;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters) {
      const Cell* cell = sum.cell(c, i);
      if (!cell) continue;
      std::string label = c + " @ " + i;
      std::optional<ThreadShares> shares = cell->threads;
      // Where every run failed, the failed runs' threads (a hang); none where no run reached its case.
      const bool started = !std::all_of(cell->runs.begin(), cell->runs.end(), case_never_started);
      if (!shares && started && (shares = failed_thread_shares(cell->runs))) label += " (failed)";
      if (!shares) continue;
      StateLine line{label, state_bar_text(*shares), {}, ""};
      line.figures = figures_of(*shares, line.unknown_why);
      out.push_back(std::move(line));
    }
  return out;
}

namespace {

std::string padded(const std::string& text, std::size_t width, bool right = false) {
  const std::size_t w = display_width(text);
  if (w >= width) return text;
  return right ? std::string(width - w, ' ') + text : text + std::string(width - w, ' ');
}

// The figures' columns and the bar: "  20    0   0   40  20    20  CCCC…".
std::string figures_row(const std::vector<std::string>& figures, const std::vector<ThreadState>& columns, const std::string& bar) {
  std::string out;
  for (ThreadState st : columns) out += " " + padded(figures[static_cast<std::size_t>(st)], std::string(column_title(st)).size(), true);
  return out + "  " + bar;
}

// A row per line: its label and figures side by side where every one fits in `width`, else the label above.
std::string lines_text(const std::vector<StateLine>& lines, std::size_t width) {
  const std::vector<ThreadState> columns = column_states(lines);
  std::size_t label_width = 0;
  for (const auto& l : lines) label_width = std::max(label_width, display_width(l.label));
  std::string heading;
  for (ThreadState st : columns) heading += std::string(" ") + column_title(st);
  heading += "  bar";
  const bool side_by_side = width == 0 || 2 + label_width + display_width(heading) - 3 + state_bar::kLetters <= width;
  const std::string indent = side_by_side ? std::string(2 + label_width, ' ') : "   ";
  std::string out = indent + heading + "\n";
  for (const auto& l : lines) {
    out += side_by_side ? "  " + padded(l.label, label_width) : "  " + l.label + "\n" + indent;
    out += figures_row(l.figures, columns, l.bar) + "\n";
    if (!l.unknown_why.empty()) out += indent + "  ? " + l.unknown_why + "\n";
  }
  return out;
}

}  // namespace

std::string states_block_text(const Summary& sum, std::size_t width, const std::string& results_file) {
  std::vector<StateLine> lines = state_lines(sum);
  if (lines.empty()) return "";
  std::string out = "\nwhere the threads' time went (median % of the Python threads' time):\n";
  const std::size_t all = lines.size();
  if (width != 0 && all > state_bar::kMaxCells) lines.resize(state_bar::kMaxCells);
  out += lines_text(lines, width) + "  bar: a letter per 5 %: " + state_legend() + "\n";
  if (lines.size() < all)
    out += fmt::format("  ({} more cells{})\n", all - lines.size(), results_file.empty() ? "" : ": gilhost report " + results_file + " --wide");
  return out;
}

}  // namespace gilhost
