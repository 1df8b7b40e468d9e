// Numbers JSON cannot carry (NaN, infinities, integers beyond 64 bits): written tagged by the runner's
// bootstrap, read back, shown readably and compared as numbers.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "config/expect.hpp"
#include "helpers.hpp"
#include "report/summary.hpp"
#include "util/tagged_number.hpp"
#include "runner/bootstrap.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

using gilhost::display_json;
using gilhost::tagged_number_text;
using nlohmann::json;

namespace {
const json kNan = {{"$float", "nan"}};
const json kInf = {{"$float", "inf"}};
const json kMinusInf = {{"$float", "-inf"}};
const json kBig = {{"$int", "1" + std::string(400, '0')}};
}  // namespace

TEST_CASE("tagged numbers: recognised only in their exact shape", "[tagged]") {
  CHECK(tagged_number_text(kNan) == "nan");
  CHECK(tagged_number_text(kMinusInf) == "-inf");
  CHECK(tagged_number_text(json{{"$int", "-18446744073709551617"}}) == "-18446744073709551617");
  CHECK_FALSE(tagged_number_text(json{{"$float", "1.5"}}));
  CHECK_FALSE(tagged_number_text(json{{"$int", "12a"}}));
  CHECK_FALSE(tagged_number_text(json{{"$int", "-"}}));
  CHECK_FALSE(tagged_number_text(json{{"$int", 12}}));
  CHECK_FALSE(tagged_number_text(json{{"$float", "nan"}, {"other", 1}}));
  CHECK_FALSE(tagged_number_text(json("nan")));
  CHECK_FALSE(tagged_number_text(json(1.5)));
}

TEST_CASE("tagged numbers: decoded as the double they are", "[tagged]") {
  CHECK(std::isnan(gilhost::decode_tagged_number(kNan).get<double>()));
  CHECK(gilhost::decode_tagged_number(kInf).get<double>() == std::numeric_limits<double>::infinity());
  CHECK(gilhost::decode_tagged_number(kMinusInf).get<double>() == -std::numeric_limits<double>::infinity());
  CHECK(gilhost::decode_tagged_number(json{{"$int", "18446744073709551616"}}).get<double>() == 18446744073709551616.0);
  CHECK(gilhost::decode_tagged_number(kBig).get<double>() == std::numeric_limits<double>::infinity());
  CHECK(gilhost::decode_tagged_number(json("x")) == json("x"));
}

TEST_CASE("tagged numbers: shown bare, big integers short", "[tagged][report]") {
  CHECK(display_json(kNan) == "nan");
  CHECK(display_json(kMinusInf) == "-inf");
  CHECK(display_json(json{{"$int", "18446744073709551616"}}) == "18446744073709551616");  // 20 digits: all
  CHECK(display_json(kBig) == "1.0e400");
  CHECK(display_json(json{{"$int", "-" + std::string(30, '9')}}) == "-1.0e30");  // rounded up, carried
  CHECK(display_json(json{{"$int", "123456" + std::string(20, '0')}}) == "1.235e25");
  CHECK(display_json(json{{"x", kInf}, {"y", json::array({1, kNan})}}) == "{\"x\":inf,\"y\":[1,nan]}");
  CHECK(display_json(json{{"a", "b"}}) == "{\"a\":\"b\"}");
  // In the report's cells.
  CHECK(gilhost::result_display(kNan) == "nan");
  CHECK(gilhost::result_display(json{{"x", kInf}}) == "{\"x\":inf}");
  CHECK(gilhost::result_display(kBig) == "1.0e400");
}

TEST_CASE("tagged numbers: expectations compare them as numbers", "[tagged][expect]") {
  CHECK(gilhost::compare_json(gilhost::CompareOp::gt, kBig, json(1e300)));
  CHECK(gilhost::compare_json(gilhost::CompareOp::eq, kInf, json(std::numeric_limits<double>::infinity())));
  CHECK(gilhost::compare_json(gilhost::CompareOp::lt, kMinusInf, json(0)));
  CHECK_FALSE(gilhost::compare_json(gilhost::CompareOp::eq, kNan, json(0.0)));
  CHECK(gilhost::compare_json(gilhost::CompareOp::ne, kNan, json(0.0)));
}

TEST_CASE("bootstrap _json: NaN, infinities and big integers come out as JSON the host reads",
          "[tagged][bootstrap][python]") {
  if (gilhost_test::find_on_path("python3").empty()) {
    WARN("no python3 on PATH: skipping the bootstrap's JSON writer");
    return;
  }
  // 10**5000 is past 3.11's limit on int -> str conversions (4300 digits).
  const std::string program = gilhost::bootstrap_program(json::object()) +
                              "\nsys.stdout.write(_json([float('nan'), float('inf'), -float('inf'), 10**400, -10**400,"
                              " 2**63 - 1, -2**63, 2**63, {'x': float('inf')}, 1.5, 1e300, 10**5000, True]))\n";
  gilhost::Captured c = gilhost::run_capture({"python3", "-I", "-c", program}, 60);
  INFO("stderr: " << c.err);
  REQUIRE(c.exit_code == 0);
  const json v = json::parse(c.out, nullptr, false);
  REQUIRE_FALSE(v.is_discarded());
  REQUIRE(v.size() == 13);
  CHECK(v[0] == kNan);
  CHECK(v[1] == kInf);
  CHECK(v[2] == kMinusInf);
  CHECK(v[3] == kBig);
  CHECK(v[4] == json{{"$int", "-1" + std::string(400, '0')}});
  CHECK(v[5] == json(9223372036854775807LL));
  CHECK(v[6] == json(std::numeric_limits<long long>::min()));
  CHECK(v[7] == json{{"$int", "9223372036854775808"}});
  CHECK(v[8] == json{{"x", kInf}});
  CHECK(v[9] == json(1.5));
  CHECK(v[10] == json(1e300));
  CHECK(v[11] == json{{"$int", "1" + std::string(5000, '0')}});
  CHECK(v[12] == json(true));
}
