// config/expect: compare_json, lookup_key and check_expectations.
#include <catch2/catch.hpp>

#include "config/expect.hpp"

using gilhost::Case;
using gilhost::CheckResult;
using gilhost::CompareOp;
using gilhost::Expectation;
using gilhost::RunFacts;
using gilhost::Version;
using gilhost::VersionSpec;
using nlohmann::json;

TEST_CASE("compare_json: integers compare exactly", "[expect]") {
  CHECK(gilhost::compare_json(CompareOp::eq, json(4000000), json(4000000)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json(3999999), json(4000000)));
  CHECK(gilhost::compare_json(CompareOp::ne, json(3999999), json(4000000)));
  CHECK(gilhost::compare_json(CompareOp::lt, json(3999999), json(4000000)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::lt, json(4000000), json(4000000)));
  CHECK(gilhost::compare_json(CompareOp::le, json(4000000), json(4000000)));
  CHECK(gilhost::compare_json(CompareOp::gt, json(-1), json(-2)));
  CHECK(gilhost::compare_json(CompareOp::ge, json(-2), json(-2)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::ge, json(-3), json(-2)));
  // Beyond double precision: 2^53 + 1 and 2^53 are different integers (as doubles they are equal).
  const long long big = 9007199254740993LL;
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json(big), json(big - 1)));
  CHECK(gilhost::compare_json(CompareOp::gt, json(big), json(big - 1)));
}

TEST_CASE("compare_json: floats, and ints against floats, compare numerically", "[expect]") {
  CHECK(gilhost::compare_json(CompareOp::eq, json(2.5), json(2.5)));
  CHECK(gilhost::compare_json(CompareOp::lt, json(2.5), json(2.75)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::gt, json(2.5), json(2.75)));
  CHECK(gilhost::compare_json(CompareOp::eq, json(3), json(3.0)));
  CHECK(gilhost::compare_json(CompareOp::eq, json(3.0), json(3)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::ne, json(3), json(3.0)));
  CHECK(gilhost::compare_json(CompareOp::lt, json(3), json(3.5)));
  CHECK(gilhost::compare_json(CompareOp::ge, json(4.0), json(4)));
  CHECK(gilhost::compare_json(CompareOp::gt, json(0.1), json(0)));
  CHECK(gilhost::compare_json(CompareOp::eq, json(7u), json(7)));
}

TEST_CASE("compare_json: other values compare by equality; ordering needs numbers", "[expect]") {
  CHECK(gilhost::compare_json(CompareOp::eq, json("abc"), json("abc")));
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json("abc"), json("abd")));
  CHECK(gilhost::compare_json(CompareOp::ne, json("abc"), json("abd")));
  CHECK_FALSE(gilhost::compare_json(CompareOp::lt, json("a"), json("b")));
  CHECK_FALSE(gilhost::compare_json(CompareOp::ge, json("b"), json("b")));
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json("3"), json(3)));
  CHECK(gilhost::compare_json(CompareOp::ne, json("3"), json(3)));
  CHECK(gilhost::compare_json(CompareOp::eq, json(true), json(true)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json(true), json(1)));
  CHECK(gilhost::compare_json(CompareOp::eq, json{{"a", 1}, {"b", {1, 2}}}, json{{"b", {1, 2}}, {"a", 1}}));
  CHECK_FALSE(gilhost::compare_json(CompareOp::eq, json::array({1, 2}), json::array({2, 1})));
  CHECK(gilhost::compare_json(CompareOp::eq, json(nullptr), json(nullptr)));
  CHECK_FALSE(gilhost::compare_json(CompareOp::lt, json(nullptr), json(1)));
}

TEST_CASE("lookup_key: dotted paths through dicts and arrays", "[expect]") {
  json result = {{"a", {{"b", 3}, {"list", {10, 20, {{"deep", "x"}}}}}}, {"top", 1}};
  json out;
  REQUIRE(gilhost::lookup_key(result, "top", out));
  CHECK(out == 1);
  REQUIRE(gilhost::lookup_key(result, "a.b", out));
  CHECK(out == 3);
  REQUIRE(gilhost::lookup_key(result, "a.list.1", out));
  CHECK(out == 20);
  REQUIRE(gilhost::lookup_key(result, "a.list.2.deep", out));
  CHECK(out == "x");
  CHECK_FALSE(gilhost::lookup_key(result, "a.list.3", out));
  CHECK(out.is_null());
  CHECK_FALSE(gilhost::lookup_key(result, "a.c", out));
  CHECK_FALSE(gilhost::lookup_key(result, "a.list.x", out));
  CHECK_FALSE(gilhost::lookup_key(result, "a.list.-1", out));
  CHECK_FALSE(gilhost::lookup_key(result, "top.more", out));
  CHECK_FALSE(gilhost::lookup_key(json(5), "a", out));
}

namespace {

Expectation result_check(CompareOp op, json value, const std::string& key = "") {
  Expectation e;
  e.key = key;
  e.result_checks.emplace_back(op, std::move(value));
  return e;
}

RunFacts ok_run(json result) {
  RunFacts f;
  f.status = "ok";
  f.has_result = true;
  f.result = std::move(result);
  return f;
}

const Version k312{3, 12, 4};

}  // namespace

TEST_CASE("check_expectations: 'status ok' is implied when nothing constrains the status", "[expect]") {
  Case c;
  c.expects.push_back(result_check(CompareOp::eq, 42));

  auto good = gilhost::check_expectations(c, k312, false, ok_run(42));
  REQUIRE(good.size() == 2);
  CHECK(good[0].description == "status ok");
  CHECK(good[0].ok);
  CHECK(good[1].description == "result == 42");
  CHECK(good[1].ok);
  CHECK(good[1].detail.empty());

  RunFacts failed;
  failed.status = "error";
  failed.error_type = "KeyError";
  auto bad = gilhost::check_expectations(c, k312, false, failed);
  REQUIRE(bad.size() == 2);
  CHECK_FALSE(bad[0].ok);
  CHECK(bad[0].detail == "status was error (KeyError)");
  CHECK_FALSE(bad[1].ok);
  CHECK(bad[1].detail == "the run returned no result");

  // No expectations at all: still "status ok".
  Case none;
  auto only = gilhost::check_expectations(none, k312, false, failed);
  REQUIRE(only.size() == 1);
  CHECK(only[0].description == "status ok");
  CHECK_FALSE(only[0].ok);
}

TEST_CASE("check_expectations: an expectation on status, error or exit code replaces the implied one", "[expect]") {
  RunFacts raised;
  raised.status = "error";
  raised.exit_code = 1;
  raised.error_type = "BrokenProcessPool";
  raised.stderr_text = "Traceback ...\nconcurrent.futures.process.BrokenProcessPool: boom\n";

  Case by_error;
  Expectation e;
  e.error = "BrokenProcessPool";
  e.stderr_contains = "boom";
  by_error.expects.push_back(e);
  auto r = gilhost::check_expectations(by_error, k312, false, raised);
  REQUIRE(r.size() == 1);
  CHECK(r[0].ok);
  CHECK(r[0].description == "raises BrokenProcessPool, stderr has \"boom\"");

  Case by_status;
  Expectation s;
  s.status = "error";
  s.exit_code = 2;
  s.stdout_contains = "hello";
  s.note = "see issue 7";
  by_status.expects.push_back(s);
  auto r2 = gilhost::check_expectations(by_status, k312, false, raised);
  REQUIRE(r2.size() == 1);
  CHECK_FALSE(r2[0].ok);
  CHECK(r2[0].detail == "exit code was 1; not in stdout (see issue 7)");

  Case wrong_error;
  Expectation w;
  w.error = "SyntaxError";
  wrong_error.expects.push_back(w);
  auto r3 = gilhost::check_expectations(wrong_error, k312, false, raised);
  REQUIRE(r3.size() == 1);
  CHECK(r3[0].detail == "raised BrokenProcessPool");
  auto r4 = gilhost::check_expectations(wrong_error, k312, false, ok_run(1));
  REQUIRE(r4.size() == 1);
  CHECK(r4[0].detail == "no exception was raised");
}

TEST_CASE("check_expectations: result checks with a key", "[expect]") {
  json result = {{"counter", 3999000}, {"per_thread", {1000000, 999000}}, {"meta", {{"mode", "fork"}}}};
  Case c;
  c.expects.push_back(result_check(CompareOp::lt, 4000000, "counter"));
  c.expects.push_back(result_check(CompareOp::eq, 999000, "per_thread.1"));
  c.expects.push_back(result_check(CompareOp::eq, "spawn", "meta.mode"));
  c.expects.push_back(result_check(CompareOp::ge, 0, "missing"));
  auto r = gilhost::check_expectations(c, k312, false, ok_run(result));
  REQUIRE(r.size() == 5);
  CHECK(r[0].ok);  // status ok
  CHECK(r[1].ok);
  CHECK(r[1].description == "result.counter < 4000000");
  CHECK(r[2].ok);
  CHECK_FALSE(r[3].ok);
  CHECK(r[3].detail == "got \"fork\"");
  CHECK_FALSE(r[4].ok);
  CHECK(r[4].detail == "the result has no 'missing'");

  // Several checks in one expectation: each failing one is listed.
  Case range;
  Expectation e;
  e.result_checks = {{CompareOp::gt, json(10)}, {CompareOp::lt, json(20)}};
  range.expects.push_back(e);
  CHECK(gilhost::check_expectations(range, k312, false, ok_run(15.5))[1].ok);
  auto out_of_range = gilhost::check_expectations(range, k312, false, ok_run(25));
  CHECK_FALSE(out_of_range[1].ok);
  CHECK(out_of_range[1].detail == "got 25");
  CHECK(out_of_range[1].description == "result > 10, result < 20");
}

TEST_CASE("check_expectations: python and free_threaded conditions select what applies", "[expect]") {
  Case c;
  Expectation old_python = result_check(CompareOp::lt, 4000000);
  old_python.python = VersionSpec::parse("<3.10");
  Expectation ft_only = result_check(CompareOp::eq, 4000000);
  ft_only.free_threaded = true;
  Expectation gil_313 = result_check(CompareOp::ne, 0);
  gil_313.python = VersionSpec::parse(">=3.13");
  gil_313.free_threaded = false;
  c.expects = {old_python, ft_only, gil_313};

  auto descriptions = [](const std::vector<CheckResult>& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(r.description);
    return out;
  };

  const RunFacts lost = ok_run(3500000);
  auto on_39 = gilhost::check_expectations(c, Version{3, 9, 18}, false, lost);
  CHECK(descriptions(on_39) == std::vector<std::string>{"status ok", "python <3.10: result < 4000000"});
  CHECK(on_39[1].ok);

  auto on_312 = gilhost::check_expectations(c, Version{3, 12, 0}, false, lost);
  CHECK(descriptions(on_312) == std::vector<std::string>{"status ok"});

  auto on_313t = gilhost::check_expectations(c, Version{3, 13, 1}, true, lost);
  CHECK(descriptions(on_313t) == std::vector<std::string>{"status ok", "free-threaded: result == 4000000"});
  CHECK_FALSE(on_313t[1].ok);
  CHECK(on_313t[1].detail == "got 3500000");

  auto on_313 = gilhost::check_expectations(c, Version{3, 13, 1}, false, lost);
  CHECK(descriptions(on_313) == std::vector<std::string>{"status ok", "python >=3.13, GIL build: result != 0"});
  CHECK(on_313[1].ok);
}

TEST_CASE("check_expectations: the gil condition follows the GIL a run starts with, forced or not", "[expect]") {
  Case c;
  Expectation serial = result_check(CompareOp::lt, 1.5);
  serial.gil = true;
  Expectation parallel = result_check(CompareOp::gt, 1.5);
  parallel.gil = false;
  c.expects = {serial, parallel};

  auto applied = [&](bool free_threaded, bool forced) {
    RunFacts f = ok_run(1.0);
    f.gil_forced = forced;
    std::vector<std::string> out;
    for (const auto& r : gilhost::check_expectations(c, Version{3, 14, 0}, free_threaded, f))
      out.push_back(r.description + (r.ok ? "" : " ✗"));
    return out;
  };
  // A GIL build and a free-threaded build with its GIL forced on both run with the GIL.
  CHECK(applied(false, false) == std::vector<std::string>{"status ok", "with the GIL: result < 1.5"});
  CHECK(applied(true, true) == std::vector<std::string>{"status ok", "with the GIL: result < 1.5"});
  // A plain free-threaded build runs without: the other expectation applies (and fails on 1.0).
  CHECK(applied(true, false) == std::vector<std::string>{"status ok", "without the GIL: result > 1.5 ✗"});
}
