#include "run/progress.hpp"

#include <cstdio>
#include <string>

#include "util/strings.hpp"

namespace gilhost {

void print_progress(const Progress& p) {
  std::string eta = p.done > 0 ? ", ETA " + format_duration(p.elapsed_s / p.done * (p.total - p.done)) : "";
  std::fprintf(stderr, "\r\033[K[%d/%d] %s @ %s%s (%s%s)", p.done + 1, p.total, p.run->c->name.c_str(),
               p.run->interp->label.c_str(), p.run->warmup ? " warm-up" : "", format_duration(p.elapsed_s).c_str(),
               eta.c_str());
  std::fflush(stderr);
}

void clear_progress() { std::fprintf(stderr, "\r\033[K"); }

}  // namespace gilhost
