// Issue 19's terminal part: the live progress line's text, tables fitted to a width.
#include <catch2/catch.hpp>

#include "run/progress.hpp"

using namespace gilhost;

namespace {

struct OneRun {
  Case c;
  Interpreter interp;
  PlannedRun run;
  OneRun() {
    c.name = "threads[workers=8]";
    interp.label = "3.13.5";
    run.c = &c;
    run.interp = &interp;
  }
};

}  // namespace

TEST_CASE("progress line: the running case's elapsed time of its timeout, the total and the ETA", "[answer-terminal]") {
  OneRun one;
  Progress p;
  p.done = 2;
  p.total = 12;
  p.run = &one.run;
  p.run_elapsed_s = 12;
  p.timeout_s = 300;
  p.elapsed_s = 65;  // 53 s for the two finished runs: 26.5 s each, 10 to go, this one 12 s in
  CHECK(progress_line(p) == "[3/12] threads[workers=8] @ 3.13.5  12s of 300s timeout · total 1m05s, ETA 4m13s");
}

TEST_CASE("progress line: no ETA before a run has finished; a warm-up run says so", "[answer-terminal]") {
  OneRun one;
  one.run.warmup = true;
  Progress p;
  p.total = 4;
  p.run = &one.run;
  p.run_elapsed_s = 3.2;
  p.elapsed_s = 3.4;
  p.timeout_s = 2.5;
  CHECK(progress_line(p) == "[1/4] threads[workers=8] @ 3.13.5 warm-up  3s of 2.5s timeout · total 3s");
}
