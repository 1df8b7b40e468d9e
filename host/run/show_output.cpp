#include "run/show_output.hpp"

#include <cstdio>
#include <string>

namespace gilhost {

namespace {

void print_labelled(std::FILE* to, const char* stream, const PlannedRun& run, const std::string& text) {
  if (text.empty()) return;
  std::fprintf(to, "── %s of %s @ %s (%s%d) ──\n%s%s", stream, run.c->name.c_str(), run.interp->label.c_str(),
               run.warmup ? "warm-up " : "run ", run.round + 1, text.c_str(), text.back() == '\n' ? "" : "\n");
  std::fflush(to);
}

}  // namespace

void show_run_output(const Progress& finished) {
  print_labelled(stdout, "stdout", *finished.run, finished.record->stdout_text);
  print_labelled(stderr, "stderr", *finished.run, finished.record->stderr_text);
}

}  // namespace gilhost
