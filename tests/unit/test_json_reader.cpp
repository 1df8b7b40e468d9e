// util/json_reader: the runner's spec reader reads what nlohmann reads, as nlohmann reads it, and refuses
// what nlohmann refuses.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "util/json_reader.hpp"
#include "util/strings.hpp"

using gilhost::read_json;
using nlohmann::json;

namespace {

// The reader's value as nlohmann holds it: equal, and written alike (the kind of each number kept).
void check_same_as_nlohmann(const std::string& text) {
  INFO(text);
  std::string error;
  const auto mine = read_json(text, error);
  const json theirs = json::parse(text, nullptr, false);
  REQUIRE(mine.has_value() == !theirs.is_discarded());
  if (!mine) {
    CHECK_FALSE(error.empty());
    return;
  }
  const json converted = gilhost::to_nlohmann(*mine);
  CHECK(converted == theirs);
  CHECK(converted.dump() == theirs.dump());
}

}  // namespace

TEST_CASE("json_reader: values and their kinds as nlohmann reads them", "[json_reader]") {
  for (const char* text :
       {"{}", "[]", " { } ", "null", "true", "false", "0", "-0", "7", "-7", "1.5", "-2.5e-3", "1E10", "1e+2",
        "18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
        "123456789012345678901234567890", "5e-324", "\"\"", "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\\u20ac\\ud83d\\ude00\"", "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "[1,[2,[3,{}]],\"x\"]",
        "{\"a\":1,\"b\":{\"c\":[true,false,null]},\"a\":2}",
        "\xef\xbb\xbf{\"bom\":1}",
        "{\"libpython\":\"/x/libpython3.14.so.1.0\",\"kwargs\":{\"n\":{\"$float\":\"nan\"},\"$$k\":[1,-2,3.25]},"
        "\"subinterpreters\":4,\"locate_gil\":false,\"argv\":[\"a b\",\"\\u0001\"]}"})
    check_same_as_nlohmann(text);
}

TEST_CASE("json_reader: what nlohmann refuses is refused, with where", "[json_reader]") {
  for (const char* text :
       {"", " ", "{", "[", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}", "01", "1.", ".5", "1e", "-",
        "+1", "nul", "truex", "[1 2]", "\"abc", "\"a\x01\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"\xff\"", "\"\xc3\"", "1e400", "-1e400", "{} {}", "[1] x", "'a'",
        "\xef\xbb{}", "\xef\xbb\xbf"})
    check_same_as_nlohmann(text);
  std::string error;
  CHECK_FALSE(read_json("[1, 2", error));
  CHECK(error.find("at byte 5") != std::string::npos);
}

TEST_CASE("json_reader: UTF-8 as strict as nlohmann's: no surrogate, overlong form or code point past U+10FFFF",
          "[json_reader]") {
  // The fuzzer's find (CI, 2026-12-07): an encoded surrogate (ED BB BB) was taken for UTF-8.
  check_same_as_nlohmann("\"\xed\xbb\xbb\xef\xbb\xbb\xef\xa0\xa8" "a\"");
  for (const char* text :
       {"\"\xed\xa0\x80\"", "\"\xed\xbf\xbf\"", "\"\xed\x9f\xbf\"",     // U+D800, U+DFFF (no), U+D7FF (yes)
        "\"\xe0\x80\xaf\"", "\"\xe0\x9f\xbf\"", "\"\xe0\xa0\x80\"",     // overlong 3-byte (no), U+0800
        "\"\xf0\x80\x80\xaf\"", "\"\xf0\x8f\xbf\xbf\"", "\"\xf0\x90\x80\x80\"",  // overlong 4, U+10000
        "\"\xf4\x8f\xbf\xbf\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",  // U+10FFFF; past it
        "\"\xc0\xaf\"", "\"\xc2\x80\"", "\"\xef\xbf\xbf\""})
    check_same_as_nlohmann(text);
  CHECK_FALSE(gilhost::is_valid_utf8("\xed\xa0\x80"));
  CHECK_FALSE(gilhost::is_valid_utf8("\xf4\x90\x80\x80"));
  CHECK(gilhost::is_valid_utf8("\xed\x9f\xbf\xf4\x8f\xbf\xbf"));
  CHECK(gilhost::escape_controls("a\xed\xa0\x80") == "a\\xed\\xa0\\x80");  // shown as bytes, not passed on
}

TEST_CASE("json_reader: nesting beyond kMaxJsonDepth is refused; up to it is read", "[json_reader]") {
  std::string error;
  CHECK(read_json(std::string(256, '[') + std::string(256, ']'), error));
  CHECK_FALSE(read_json(std::string(257, '[') + std::string(257, ']'), error));
  CHECK(error.find("nested too deep") != std::string::npos);
}

TEST_CASE("json_reader: random values written by nlohmann read back the same", "[json_reader]") {
  std::mt19937_64 rng(20261207);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const char* const pieces[] = {"a", "\"", "\\", "\n", "\x01", "\x7f", "\xc3\xa9", "\xf0\x9f\x98\x80", " "};
  std::function<json(int)> make = [&](int depth) -> json {
    switch (depth > 3 ? pick(5) : pick(7)) {
      case 0: return nullptr;
      case 1: return pick(2) == 0;
      case 2: return static_cast<std::int64_t>(rng());
      case 3: return std::ldexp(static_cast<double>(rng() % 1000000) - 500000, pick(200) - 100);
      case 4: {
        std::string s;
        for (int i = pick(8); i > 0; --i) s += pieces[pick(9)];
        return s;
      }
      case 5: {
        json a = json::array();
        for (int i = pick(4); i > 0; --i) a.push_back(make(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (int i = pick(4); i > 0; --i) o["k" + std::to_string(pick(6))] = make(depth + 1);
        return o;
      }
    }
  };
  for (int i = 0; i < 300; ++i) {
    const json v = make(0);
    check_same_as_nlohmann(v.dump());
    check_same_as_nlohmann(v.dump(2));
    check_same_as_nlohmann(v.dump(-1, ' ', true));  // every non-ASCII character as a \u escape
  }
}
