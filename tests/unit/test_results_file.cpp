// run/results_file: JSON Lines written one record at a time, and read back.
#include <catch2/catch.hpp>

#include <fstream>

#include "helpers.hpp"
#include "report/merge.hpp"
#include "run/results_file.hpp"

using gilhost::ResultsSet;
using gilhost::ResultsWriter;
using nlohmann::json;

TEST_CASE("results file: append and read back", "[results]") {
  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "nested/dir/race.jsonl").string();
  const json meta = {{"type", "meta"}, {"experiment", "race"}, {"machine", {{"cores", 2}}}};
  const json run = {{"type", "run"}, {"case", "plain"}, {"wall_ns", 123}, {"result", {{"é", json::array({1, 2.5})}}}};
  const json skip = {{"type", "skip"}, {"case", "plain"}, {"reason", "no 3.14"}};
  {
    ResultsWriter w(path);  // creates the folders
    CHECK(w.path() == path);
    w.append(meta);
    w.append(run);
    w.append(skip);
  }
  const std::string text = gilhost_test::slurp(path);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
  CHECK(text.back() == '\n');

  ResultsSet set = gilhost::read_results(path);
  REQUIRE(set.metas.size() == 1);
  CHECK(set.metas[0] == meta);
  REQUIRE(set.records.size() == 2);
  CHECK(set.records[0] == run);
  CHECK(set.records[1] == skip);
  CHECK(set.malformed_lines == 0);

  // A second session appends to the same file.
  {
    ResultsWriter w(path);
    w.append(meta);
    w.append(run);
  }
  ResultsSet merged = gilhost::read_results(path);
  CHECK(merged.metas.size() == 2);
  CHECK(merged.records.size() == 3);
}

TEST_CASE("results file: a torn last line is counted as malformed, and the next session starts clean", "[results]") {
  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "r.jsonl").string();
  {
    ResultsWriter w(path);
    w.append({{"type", "meta"}});
    w.append({{"type", "run"}, {"case", "a"}});
  }
  {
    std::ofstream torn(path, std::ios::app | std::ios::binary);
    torn << "{\"type\": \"run\", \"case\": \"b\", \"wall";  // a crash mid-write
  }
  ResultsSet set = gilhost::read_results(path);
  CHECK(set.records.size() == 1);
  CHECK(set.malformed_lines == 1);

  {
    ResultsWriter w(path);
    w.append({{"type", "run"}, {"case", "c"}});
  }
  ResultsSet after = gilhost::read_results(path);
  REQUIRE(after.records.size() == 2);
  CHECK(after.records[1]["case"] == "c");  // not glued to the torn line
  CHECK(after.malformed_lines == 1);
}

TEST_CASE("results file: lines that are not objects, blank lines, bad UTF-8", "[results]") {
  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "r.jsonl").string();
  gilhost_test::write_file(path, "{\"type\":\"meta\"}\n\n   \n[1,2]\n\"text\"\n{\"type\":\"run\"}\n");
  ResultsSet set = gilhost::read_results(path);
  CHECK(set.metas.size() == 1);
  CHECK(set.records.size() == 1);
  CHECK(set.malformed_lines == 2);

  // Invalid UTF-8 from a script's output is replaced, not a write failure.
  {
    ResultsWriter w(path);
    w.append({{"type", "run"}, {"stdout", std::string("bad \xff\xfe bytes")}});
  }
  ResultsSet more = gilhost::read_results(path);
  REQUIRE(more.records.size() == 2);
  CHECK(more.records[1]["stdout"] == "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");

  CHECK_THROWS_AS(gilhost::read_results((tmp / "missing.jsonl").string()), std::system_error);
}

TEST_CASE("default_results_path: results/NAME-DATE-TIME.jsonl", "[results]") {
  const std::string p = gilhost::default_results_path("race");
  CHECK_THAT(p, Catch::Matchers::Matches(R"(results/race-\d{8}-\d{6}\.jsonl)"));
}

TEST_CASE("results_line_problem: what a report cannot use", "[results]") {
  using gilhost::results_line_problem;
  CHECK(results_line_problem({{"type", "meta"}, {"format", 1}}).empty());
  CHECK(results_line_problem({{"type", "meta"}, {"format", 999}}) ==
        "results format 999 is not one this gilhost reads (format 1; was it written by a newer gilhost?)");
  CHECK(results_line_problem({{"type", "meta"}, {"format", "1"}}).find("results format \"1\"") == 0);
  CHECK(results_line_problem({{"type", "meta"}}) == "a meta record without \"format\"");
  const json run = {{"type", "run"}, {"experiment", "e"}, {"case", "c"}, {"interpreter", "3.12.1"},
                    {"status", "ok"}, {"wall_ns", 12}};
  CHECK(results_line_problem(run).empty());
  CHECK(results_line_problem({{"type", "run"}}) ==
        "a run record without \"experiment\", \"case\", \"interpreter\", \"status\", \"wall_ns\"");
  json no_wall = run;
  no_wall.erase("wall_ns");
  no_wall["case"] = 3;
  CHECK(results_line_problem(no_wall) == "a run record without \"case\", \"wall_ns\"");
  CHECK(results_line_problem({{"type", "skip"}}).empty());
  CHECK(results_line_problem({{"type", "rnu"}}) == "unknown record type \"rnu\"");
  CHECK(results_line_problem({{"case", "c"}}) == "not a gilhost record (it has no \"type\")");
}

TEST_CASE("load_results_ordered: a newer format, a run without fields or no record at all is a located error",
          "[results][merge]") {
  gilhost_test::TempDir tmp;
  auto message_for = [&](const std::string& name, const std::string& text) -> std::string {
    const std::string path = (tmp / name).string();
    gilhost_test::write_file(path, text);
    try {
      gilhost::load_results_ordered(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string meta = R"({"type":"meta","format":1})";
  const std::string run = R"({"type":"run","experiment":"e","case":"c","interpreter":"i","status":"ok","wall_ns":1})";
  CHECK(message_for("newer.jsonl", R"({"type":"meta","format":999})" "\n" + run + "\n") ==
        (tmp / "newer.jsonl").string() +
            ":1: results format 999 is not one this gilhost reads (format 1; was it written by a newer gilhost?)");
  CHECK(message_for("empty_run.jsonl", meta + "\n\n" + R"({"type":"run"})" + "\n") ==
        (tmp / "empty_run.jsonl").string() +
            ":3: a run record without \"experiment\", \"case\", \"interpreter\", \"status\", \"wall_ns\"");
  CHECK(message_for("random.jsonl", std::string("\x8f\x01zq\xff\n\x13\x37{{[\n", 12)) ==
        (tmp / "random.jsonl").string() + ": no gilhost record in it (2 lines, none of them JSON: not a results file?)");
  CHECK(message_for("empty.jsonl", "") == (tmp / "empty.jsonl").string() + ": no gilhost record in it (the file is empty)");

  // A good file, even with its last line cut by a crash, loads.
  const std::string good = (tmp / "good.jsonl").string();
  gilhost_test::write_file(good, meta + "\n" + run + "\n" + R"({"type":"run","ca)");
  gilhost::LoadedResults loaded = gilhost::load_results_ordered(good);
  CHECK(loaded.lines.size() == 2);
  CHECK(loaded.malformed_lines == 1);
}
