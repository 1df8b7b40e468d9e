#pragma once
// Where each cell's Python threads spent their time, as the terminal shows it: a row per cell, each state's
// share and a stacked bar of letters (a letter a state, 5 % a letter):
//                  cpu core GIL lock I/O sleep  bar
//   four @ 3.12.1   20    0   0   40  20    20  CCCCLLLLLLLLIIIISSSS
// A share the runs cannot tell (the GIL not located, too little of the tree seen) is "?" in the bar and in
// the figures, never 0, with the reason under the row (the cell's gil_unknown_why, report/threads).
#include <cstddef>
#include <string>
#include <vector>

#include "report/summary.hpp"
#include "report/threads.hpp"

namespace gilhost {

namespace state_bar {
constexpr std::size_t kLetters = 20;     // the bar's length: 5 % a letter
constexpr std::size_t kMaxCells = 12;    // cells shown where the width is limited; the rest counted
constexpr char kUnknown = '?';           // GIL (or GIL and lock together) where they were not told apart
}  // namespace state_bar

// The bar's letter of a state: C cpu, Q core (waiting in the run queue), G GIL, L lock, I I/O, S sleep,
// O other.
char state_letter(ThreadState state);
// The legend of those letters, for the block's heading.
std::string state_legend();

// The bar: `letters` letters in kThreadStates' order, each state's count its share of the shares' sum
// (largest remainders, so the counts add up); GIL letters are '?' where the GIL share is unknown, and GIL and
// lock letters both where the runs did not tell them apart.
std::string state_bar_text(const ThreadShares& shares, std::size_t letters = state_bar::kLetters);
// "cpu 18 · core 20 · GIL 0 · lock 41 · I/O 20 · sleep 20 %" (other only where it is 1 % or more); "GIL ?",
// and "GIL ? · lock ? (together 41)" where they were not told apart.
std::string state_figures_text(const ThreadShares& shares);

// One cell's line: its label ("four @ 3.12.1", "hang @ 3.12.1 (failed)"), bar, each state's whole
// percentage in kThreadStates' order ("?" where unknown), and why a figure is "?" ("" when none is).
struct StateLine {
  std::string label, bar;
  std::vector<std::string> figures;
  std::string unknown_why;
};
// A line per cell with thread states, cases in the grid's order, builds in column order; a cell whose
// measured runs all failed draws them (report/threads' failed_thread_shares).
std::vector<StateLine> state_lines(const Summary& summary);

// The block under a report: a heading with the legend, then the rows, the label beside its figures where
// every row fits in `width` (0: any width, every cell) and above them where not; past kMaxCells the rest is
// counted, and `results_file` named for all of them.
std::string states_block_text(const Summary& summary, std::size_t width, const std::string& results_file);

}  // namespace gilhost
