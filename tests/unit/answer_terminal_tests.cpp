// Issue 19's terminal part: the live progress line's text, tables fitted to a width.
#include <catch2/catch.hpp>

#include "report/fit.hpp"
#include "report/text_grid.hpp"
#include "run/progress.hpp"
#include "util/strings.hpp"

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

namespace {

Table details_like() {
  Table t;
  t.columns = {Column("case"), Column("wall", Align::right), Column("min–max", Align::right).dropped_at(2),
               Column("maxrss", Align::right).dropped_at(9), Column("init", Align::right, false)};
  t.add_row({"subinterpreters_shared_gil[subinterpreters=8]", "125 ms", "120 ms–130 ms", "11.0 MB", "3 ms"});
  t.add_row({"sequential", "94.3 ms", "93 ms–95 ms", "10.8 MB", "3 ms"});
  return t;
}

}  // namespace

TEST_CASE("fit_table: the terminal's columns; at no width limit nothing else changes", "[answer-terminal]") {
  const Table t = fit_table(details_like(), 0);
  REQUIRE(t.columns.size() == 4);  // init is not a terminal column
  CHECK(t.rows[0][0] == "subinterpreters_shared_gil[subinterpreters=8]");
  CHECK(table_width(t) == 45 + 2 + 7 + 2 + 13 + 2 + 7);
}

TEST_CASE("fit_table: the highest drop order goes first, then the next, then cells are cut with …", "[answer-terminal]") {
  const Table wide = fit_table(details_like(), 0);
  Table t = fit_table(details_like(), table_width(wide) - 1);
  REQUIRE(t.columns.size() == 3);
  CHECK(t.columns[2].title == "min–max");  // maxrss (9) left out before min–max (2)
  t = fit_table(details_like(), 60);
  REQUIRE(t.columns.size() == 2);
  CHECK(t.rows[0][0] == "subinterpreters_shared_gil[subinterpreters=8]");
  t = fit_table(details_like(), 40);
  REQUIRE(t.columns.size() == 2);
  CHECK(table_width(t) <= 40);
  // Cut in the middle: the sweep's values tell the cases apart (the keys go first).
  CHECK(t.rows[0][0] == "subinterpreters_shared_gil[8]");
  CHECK(t.rows[1][0] == "sequential");
}

TEST_CASE("fit_table: never cuts a column below 8 display columns", "[answer-terminal]") {
  const Table t = fit_table(details_like(), 5);
  CHECK(display_width(t.rows[0][0]) == 8);
  CHECK(truncate_display("3.14.7t ±1.2%", 6) == "3.14.…");
}

TEST_CASE("column_blocks: a wide table in blocks of its first column and the columns that fit", "[answer-terminal]") {
  Table views;
  views.columns.emplace_back("view");
  for (const char* b : {"3.9.18", "3.10.13", "3.11.2", "3.11.7", "3.12.1", "3.13.0", "3.14.7", "3.14.7t"})
    views.columns.emplace_back(b, Align::right);
  views.columns.emplace_back("the article", Align::right);
  views.add_row({"lost updates, a call between read and write (article: 3.9)", "51.9 %", "66.1 %", "46.8 %", "51.5 %", "50 %",
                 "56.3 %", "41.3 %", "62.4 %", "52 %"});
  const auto blocks = column_blocks(views, 80, 36);
  REQUIRE(blocks.size() == 2);
  std::size_t columns = 0;
  for (const Table& b : blocks) {
    CHECK(table_width(b) <= 80);
    CHECK(b.columns[0].title == "view");
    CHECK(b.rows[0][0].rfind("lost updates, a ca", 0) == 0);  // the title's start, in every block
    columns += b.columns.size() - 1;
    for (const auto& cell : std::vector<std::string>(b.rows[0].begin() + 1, b.rows[0].end())) CHECK(cell.find("…") == std::string::npos);
  }
  CHECK(columns == 9);  // every build and the article, each whole
  CHECK(blocks.back().columns.back().title == "the article");
  // What fits stays one table.
  CHECK(column_blocks(views, 0, 36).size() == 1);
  CHECK(column_blocks(views, 200, 36).size() == 1);
}

TEST_CASE("shorten_display: a sweep's [values] kept whole, else the start and the end", "[answer-terminal]") {
  CHECK(shorten_display("subinterpreters_shared_gil[subinterpreters=8]", 40) == "subinterpreters_shar…[subinterpreters=8]");
  // Too narrow for the keys: the values alone, so that siblings stay apart.
  CHECK(shorten_display("subinterpreters_shared_gil[subinterpreters=8]", 24) == "subinterpreters_shar…[8]");
  CHECK(shorten_display("subinterpreters[subinterpreters=8]", 24) == "subinterpreters[8]");
  CHECK(shorten_display("nap[a=1,b=20]", 10) == "nap[1,20]");
  CHECK(shorten_display("threads[workers=8]", 30) == "threads[workers=8]");
  CHECK(shorten_display("8 threads speedup over sequential", 15) == "8 threa…uential");
  CHECK(display_width(shorten_display("8 threads speedup over sequential", 15)) == 15);
  CHECK(shorten_display("a[much_too_long_for_it=1]", 10) == "a[1]");
}

TEST_CASE("short build labels: without the patch version where that stays unambiguous", "[answer-terminal]") {
  CHECK(short_build_labels({"3.12.1", "3.14.7t", "3.14.7t+gil", "3.13.0 (exec)"}) ==
        std::vector<std::string>{"3.12", "3.14t", "3.14t+gil", "3.13 (exec)"});
  CHECK(short_build_labels({"3.12.1", "3.12.3"}) == std::vector<std::string>{"3.12.1", "3.12.3"});
}

TEST_CASE("grid blocks: as many builds as fit beside the case column", "[answer-terminal]") {
  Grid g;
  for (const char* b : {"3.12.1", "3.13.0", "3.14.7t"}) g.columns.push_back({b, b, false});
  g.cases = {"sequential"};
  GridCell cell;
  cell.state = GridCell::State::measured;
  cell.wall = "94.3 ms ±1.0%";
  cell.result = "cpu/wall 0.98";
  g.cells = {{cell, cell, cell}};
  CHECK(grid_blocks(g, 0).size() == 1);
  const auto blocks = grid_blocks(g, 70);  // case 10 + 2 x (2 + 28): two builds a block
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].columns.size() == 3);
  CHECK(blocks[0].columns[1].title == "3.12.1");  // the full label, as the other tables name it
  CHECK(blocks[1].columns[1].title == "3.14.7t");
  for (const auto& b : blocks) CHECK(table_width(b) <= 70);
}

TEST_CASE("readings grouped: one line per kind, a few cells named, the rest counted", "[answer-terminal]") {
  std::vector<Reading> rs;
  for (const char* b : {"3.9", "3.12", "3.13", "3.14", "3.14t"}) rs.push_back({"threads", b, ReadingRule::gil_serialised, "GIL", 0, std::nullopt});
  rs.push_back({"locked", "3.9", ReadingRule::lock_convoy, "convoy", 0, std::nullopt});
  const auto lines = group_readings(rs, 4);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "GIL — threads @ 3.9, threads @ 3.12, threads @ 3.13, threads @ 3.14 and 1 more (figures of the first)");
  CHECK(lines[1] == "convoy — locked @ 3.9");
  CHECK(count_rules(rs) == 2);
}
