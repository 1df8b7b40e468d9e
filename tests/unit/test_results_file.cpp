// results/: JSON Lines written one record at a time, read back as JSON and as records; the format check.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>

#include "helpers.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"

using gilhost::ResultsSet;
using gilhost::ResultsWriter;
using nlohmann::json;

namespace {

gilhost::MetaRecord meta_record() {
  gilhost::MetaRecord m;
  m.format = gilhost::kResultsFormat;
  m.experiment = gilhost::experiment_info({{"name", "race"}});
  gilhost::MachineRecord machine;
  machine.cores = 2;
  m.machine = machine;
  return m;
}

gilhost::RunRecord run_record(const std::string& case_name) {
  gilhost::RunRecord r;
  r.experiment = "race";
  r.case_name = case_name;
  r.interpreter = "3.12.1";
  r.wall_ns = 123;
  return r;
}

}  // namespace

TEST_CASE("results file: append and read back", "[results]") {
  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "nested/dir/race.jsonl").string();
  const gilhost::MetaRecord meta = meta_record();
  gilhost::RunRecord run = run_record("plain");
  run.has_result = true;
  run.result = {{"é", json::array({1, 2.5})}};
  gilhost::SkipRecord skip;
  skip.experiment = "race";
  skip.case_name = "plain";
  skip.interpreter = "3.14.7";
  skip.reason = "no 3.14";
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
  // The writer tags every line with its session (and each record with its index): the rest is as given.
  const std::string session_id = set.metas[0].value("session_id", "");
  CHECK(session_id.size() == 32);
  for (json* j : {&set.metas[0], &set.records[0], &set.records[1]}) {
    CHECK(j->value("session_id", "") == session_id);
    j->erase("session_id");
    j->erase("index");
  }
  CHECK(set.metas[0] == gilhost::to_json(meta));
  CHECK(set.metas[0]["machine"]["cores"] == 2);
  REQUIRE(set.records.size() == 2);
  CHECK(set.records[0] == gilhost::to_json(run));
  CHECK(set.records[0]["result"]["é"] == json::array({1, 2.5}));
  CHECK(set.records[1] == gilhost::to_json(skip));
  CHECK(set.malformed_lines == 0);

  // Read back as records: the same records.
  const gilhost::LoadedResults typed = gilhost::load_results_ordered(path);
  REQUIRE(typed.lines.size() == 3);
  json typed_meta = gilhost::to_json(typed.lines[0]);
  typed_meta.erase("session_id");
  CHECK(typed_meta == gilhost::to_json(meta));
  const auto& read_run = std::get<gilhost::RunRecord>(typed.lines[1]);
  CHECK(read_run.case_name == "plain");
  CHECK(read_run.wall_ns == 123);
  CHECK(read_run.result == run.result);
  CHECK(std::get<gilhost::SkipRecord>(typed.lines[2]).reason == "no 3.14");

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
    w.append(meta_record());
    w.append(run_record("a"));
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
    w.append(run_record("c"));
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

  // Invalid UTF-8 from a script's output is replaced, not a write failure (in a file of its own: the
  // writer refuses to append to one whose first line is not a results file's meta record).
  const std::string own = (tmp / "utf8.jsonl").string();
  {
    ResultsWriter w(own);
    gilhost::RunRecord r = run_record("c");
    r.stdout_text = std::string("bad \xff\xfe bytes");
    w.append(r);
  }
  ResultsSet more = gilhost::read_results(own);
  REQUIRE(more.records.size() == 1);
  CHECK(more.records[0]["stdout"] == "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");

  CHECK_THROWS_AS(gilhost::read_results((tmp / "missing.jsonl").string()), std::system_error);
}

TEST_CASE("default_results_path: results/NAME-DATE-TIME-PID.jsonl, this session's alone", "[results]") {
  const std::string p = gilhost::default_results_path("race");
  CHECK_THAT(p, Catch::Matchers::Matches(R"(results/race-\d{8}-\d{6}-)" + std::to_string(::getpid()) + R"((-\d+)?\.jsonl)"));
  // A name already taken (a reused pid in the same second) gets a suffix instead of being appended to.
  gilhost_test::TempDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const std::string first = gilhost::default_results_path("race");
  gilhost_test::write_file(first, "{}\n");
  const std::string second = gilhost::default_results_path("race");
  std::filesystem::current_path(cwd);
  CHECK(second != first);
  // Within the same second the suffix tells them apart (a second later the time already does).
  if (second.size() > first.size()) CHECK(second == first.substr(0, first.size() - 6) + "-2.jsonl");
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

TEST_CASE("records: a field of the wrong kind or an unknown status is named, with its line", "[results]") {
  using gilhost::results_line_problem;
  const json run = {{"type", "run"}, {"experiment", "e"}, {"case", "c"}, {"interpreter", "3.12.1"},
                    {"status", "ok"}, {"wall_ns", 12}};
  json bad_repeat = run;
  bad_repeat["repeat"] = "first";
  CHECK(results_line_problem(bad_repeat) == "a run record whose \"repeat\" is not a number");
  json bad_status = run;
  bad_status["status"] = "fine";
  CHECK(results_line_problem(bad_status) ==
        "a run record whose \"status\" is \"fine\" (ok, error, timeout, crashed or interrupted)");
  json bad_cpu = run;
  bad_cpu["cpu"] = {{"cpu_ns", "lots"}};
  CHECK(results_line_problem(bad_cpu) == "a run record's \"cpu\" whose \"cpu_ns\" is not a number");
  // Null is what an older gilhost wrote for "it does not say": read as the default.
  json nulls = run;
  nulls["gil_enabled"] = nullptr;
  nulls["error"] = nullptr;
  CHECK(results_line_problem(nulls).empty());
  CHECK(results_line_problem({{"type", "meta"}, {"format", 0}}).find("results format 0 is not one") == 0);

  gilhost_test::TempDir tmp;
  const std::string path = (tmp / "kinds.jsonl").string();
  gilhost_test::write_file(path, R"({"type":"meta","format":1})" "\n" + run.dump() + "\n" + bad_repeat.dump() + "\n");
  try {
    gilhost::load_results_ordered(path);
    FAIL("a run whose repeat is text was read");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == path + ":3: a run record whose \"repeat\" is not a number");
  }
}

TEST_CASE("records: every field make_run_record writes reads back the same", "[results]") {
  gilhost::RunRecord r;
  r.experiment = "race";
  r.case_name = "plain[n=2]";
  r.base_case = "plain";
  r.params = {{"n", 2}};
  r.sweep = {{"n", 2}};
  r.interpreter = "3.14.7t";
  r.python = "3.14.7";
  r.free_threaded = true;
  r.mode = "subinterpreters";
  r.subinterpreters = 2;
  r.gil = "own";
  r.round = 3;
  r.repeat = 2;
  r.status = gilhost::RunStatus::crashed;
  r.signal = 9;
  r.note = "killed by Killed";
  r.wall_ns = 5;
  r.bootstrap_ns = 7;
  r.import_ns = 3;
  r.bootstrap_cached = true;
  r.cpu = gilhost::CaseCpu{1, 2, 3, 4, 10, 5, 6};
  r.rss = gilhost::TreeSummary{3, 1000, 900, 5, 2, 11, 2, "switch records", {{0, 800, 1, 1}, {10, 1000, 5, 2}}};
  r.has_result = true;
  r.result = {{"x", {{"$float", "nan"}}}};
  r.error = gilhost::RunError{"KeyError", "builtins.KeyError", "'k'"};
  r.metrics = {{"m", 1.5}};
  r.marks = json::array({json::array({"start", 12})});
  r.gil_enabled = false;
  r.gil_reenabled_by = {"noslot"};
  r.threads_alive_at_end = 1;
  r.per_interpreter = json::array({{{"end_ns", 3}}});
  r.expect = {{"result == 4", false, "got 3"}};
  r.expect_ok = false;
  r.origin.host = "host-a";
  r.origin.source = "a.jsonl";
  r.origin.session = 1;
  r.original_interpreter = "3.14.7t";
  const json written = gilhost::to_json(r);
  CHECK(written["status"] == "crashed");
  CHECK(written["rss"]["timeline"][1] == json::array({10.0, 1000.0, 5, 2}));
  CHECK(written["gil_enabled_before"].is_null());
  const gilhost::RunRecord back = gilhost::run_from_json(written);
  CHECK(gilhost::to_json(back) == written);
  CHECK(back.status == gilhost::RunStatus::crashed);
  CHECK(back.rss->timeline.size() == 2);
  CHECK(back.rss->idle_samples == 2);
  CHECK(back.rss->idle_check == std::optional<std::string>("switch records"));
  CHECK(back.import_ns == std::optional<std::int64_t>(3));
  CHECK(back.error->qualname == "builtins.KeyError");
  CHECK_FALSE(back.gil_enabled_before.has_value());
  CHECK(back.origin.session == 1);
}
