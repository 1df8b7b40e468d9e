// Issue 26, plain answers: `pythons` at 80 columns (8), timeit's figure per loop (2), thread names (6).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli/pythons.hpp"
#include "config/extract.hpp"
#include "protocol/codec.hpp"
#include "report/ratio.hpp"
#include "results/extract_metrics.hpp"
#include "results/thread_states.hpp"
#include "util/strings.hpp"

namespace {

std::vector<gilhost::Interpreter> builds() {
  std::vector<gilhost::Interpreter> out(2);
  out[0].label = out[0].version_full = "3.12.1";
  out[0].executable = "/root/.pyenv/versions/3.12.1/bin/python3.12";
  out[0].libpython = "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0";
  out[0].shared = true;
  out[0].source = "pyenv";
  out[1].label = out[1].version_full = "3.8.18";
  out[1].executable = "/root/.pyenv/versions/3.8.18/bin/python3.8";
  out[1].source = "pyenv";
  out[1].supported = false;
  out[1].unsupported_reason = "CPython 3.8 is older than 3.9, the oldest the runner embeds (it calls 3.9's API); install "
                              "3.9 or newer";
  return out;
}

}  // namespace

TEST_CASE("pythons at 80 columns says the whole reason a build is unusable", "[answers26][pythons]") {
  const std::string text = gilhost::pythons_table_text(builds(), 80);
  INFO(text);
  std::string joined;
  for (const auto& line : gilhost::split(text, '\n')) {
    CHECK(gilhost::display_width(line) <= 80);
    joined += " " + gilhost::trim(line);
  }
  // Every word of the reason is there, none cut with "…".
  for (const auto& word : gilhost::split(builds()[1].unsupported_reason, ' ')) CHECK(joined.find(word) != std::string::npos);
  CHECK(joined.find("3.8.18 is unusable: CPython 3.8 is older") != std::string::npos);
  // Without a width (a file), the reason stays in its cell.
  CHECK(gilhost::pythons_table_text(builds(), 0).find("unsupported: CPython 3.8") != std::string::npos);
}

TEST_CASE("wrap_words wraps at spaces and indents the lines after the first", "[answers26][pythons]") {
  CHECK(gilhost::wrap_words("aa bb cc", 5, 0, 2) == "aa bb\n  cc");
  CHECK(gilhost::wrap_words("aa bb cc", 0, 2, 4) == "  aa bb cc");
  CHECK(gilhost::wrap_words("averylongword x", 4, 0, 1) == "averylongword\n x");
}

TEST_CASE("timeit's line is read as seconds per loop", "[answers26][timeit]") {
  CHECK(gilhost::parse_duration("637 usec") == Approx(637e-6));
  CHECK(gilhost::parse_duration("1.25 msec") == Approx(1.25e-3));
  CHECK(gilhost::parse_duration("35.1 nsec") == Approx(35.1e-9));
  CHECK(gilhost::parse_duration("2 sec") == Approx(2.0));
  CHECK_FALSE(gilhost::parse_duration("637"));
  CHECK_FALSE(gilhost::parse_duration("637 parsecs"));
  const auto timing = gilhost::known_timing("timeit");
  REQUIRE(timing);
  CHECK(timing->what == "timeit's time per loop");
  CHECK_FALSE(gilhost::known_timing("json.tool"));
  const std::string out = "200 loops, best of 5: 637 usec per loop\n";
  const auto e = gilhost::extract_metrics({timing->spec}, out, static_cast<std::int64_t>(out.size()));
  INFO(e.metrics.dump());
  REQUIRE(e.metrics.contains("timeit_s_per_loop"));
  CHECK(e.metrics["timeit_s_per_loop"].get<double>() == Approx(637e-6));
  // 3.14's timeit says "loop" for one loop; the figure is the same.
  const std::string one = "1 loop, best of 5: 1.5 sec per loop\n";
  CHECK(gilhost::extract_metrics({timing->spec}, one, static_cast<std::int64_t>(one.size())).metrics["timeit_s_per_loop"] == 1.5);
}

namespace {
gilhost::RunRecord timed(std::int64_t wall_ns, double per_loop, int repeat) {
  gilhost::RunRecord r;
  r.status = gilhost::RunStatus::ok;
  r.wall_ns = wall_ns;
  r.repeat = repeat;
  r.metrics = {{"timeit_s_per_loop", per_loop}};
  return r;
}
}  // namespace

TEST_CASE("a metric's ratio pairs runs as the wall's does, and ignores the wall", "[answers26][timeit]") {
  // The issue's numbers: 3.12 ran 637 us per loop, 3.14 313 us; the wall times (loop counts) said 1.68x.
  const std::vector<gilhost::RunRecord> old{timed(1680, 637e-6, 0), timed(1680, 637e-6, 1)};
  const std::vector<gilhost::RunRecord> now{timed(1000, 313e-6, 0), timed(1000, 313e-6, 1)};
  CHECK(gilhost::wall_ratio(old, now).value == Approx(1.68));
  const gilhost::RatioStat r = gilhost::metric_ratio(old, now, "timeit_s_per_loop");
  REQUIRE(r.valid());
  CHECK(r.paired);
  CHECK(r.value == Approx(637.0 / 313.0));
  CHECK_FALSE(gilhost::metric_ratio(old, now, "absent").valid());
}

TEST_CASE("the runner's thread names replace /proc's, and the main thread is marked", "[answers26][threads]") {
  gilhost::ThreadStates s;
  s.threads.resize(3);
  for (std::size_t k = 0; k < 3; ++k) {
    s.threads[k].tid = 100 + static_cast<std::int64_t>(k);
    s.threads[k].name = "gilhost-runner";
  }
  s.threads[2].python = false;
  s.threads[2].tid = 101;  // not Python (another program's thread): keeps its comm
  gilhost::name_python_threads(s, {{100, "MainThread"}, {101, "worker-1"}}, 100);
  CHECK(s.threads[0].name == "MainThread");
  CHECK(s.threads[0].main);
  CHECK(s.threads[1].name == "worker-1");
  CHECK_FALSE(s.threads[1].main);
  CHECK(s.threads[2].name == "gilhost-runner");
}

TEST_CASE("the outcome's thread names survive encode then decode, and an older outcome has none", "[answers26][threads]") {
  gilhost::protocol::Outcome o;
  o.thread_names = {{4242, "MainThread"}, {4243, "worker-1"}};
  o.main_native_id = 4242;
  nlohmann::json j;
  gilhost::protocol::to_json(j, o);
  std::string error;
  const auto back = gilhost::protocol::decode_outcome(j.dump(), error);
  INFO(error);
  REQUIRE(back);
  CHECK(back->thread_names == o.thread_names);
  CHECK(back->main_native_id == 4242);
  j.erase("thread_names");
  j.erase("main_native_id");
  const auto older = gilhost::protocol::decode_outcome(j.dump(), error);
  REQUIRE(older);
  CHECK(older->thread_names.empty());
  CHECK_FALSE(older->main_native_id);
  CHECK_FALSE(gilhost::protocol::decode_outcome(R"({"has_result":false,"missing":[],"metrics":{},"marks":[],"thread_names":[["x"]]})", error));
}
