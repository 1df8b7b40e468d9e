// util/version: Version::parse and VersionSpec.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "util/version.hpp"

using gilhost::Version;
using gilhost::VersionSpec;

namespace {
Version v(int major, int minor, int micro) { return Version{major, minor, micro}; }
}  // namespace

TEST_CASE("Version::parse reads one to three components", "[version]") {
  auto full = Version::parse("3.12.1");
  REQUIRE(full);
  CHECK(full->major == 3);
  CHECK(full->minor == 12);
  CHECK(full->micro == 1);
  CHECK(full->str() == "3.12.1");
  CHECK(full->minor_str() == "3.12");

  auto two = Version::parse("3.13");
  REQUIRE(two);
  CHECK(*two == v(3, 13, 0));

  auto one = Version::parse("3");
  REQUIRE(one);
  CHECK(*one == v(3, 0, 0));

  auto spaced = Version::parse(" 3.9.18 ");
  REQUIRE(spaced);
  CHECK(*spaced == v(3, 9, 18));
}

TEST_CASE("Version::parse rejects what is not a version", "[version]") {
  for (const char* bad : {"", "3.", ".3", "3..1", "3.12.1.4", "3.12a", "three", "3.x", "-3.1", "3.12.1rc1", "3.1234567"}) {
    INFO("text: '" << bad << "'");
    CHECK_FALSE(Version::parse(bad));
  }
}

TEST_CASE("Versions order numerically, not as text", "[version]") {
  CHECK(v(3, 9, 0) < v(3, 10, 0));
  CHECK(v(3, 12, 9) < v(3, 12, 10));
  CHECK_FALSE(v(3, 13, 0) < v(3, 12, 99));
  CHECK(v(3, 12, 1) == *Version::parse("3.12.1"));
}

TEST_CASE("VersionSpec: lower bound", "[version]") {
  auto spec = VersionSpec::parse(">=3.10");
  CHECK(spec.text() == ">=3.10");
  CHECK(spec.matches(v(3, 10, 0)));
  CHECK(spec.matches(v(3, 10, 5)));
  CHECK(spec.matches(v(3, 13, 1)));
  CHECK_FALSE(spec.matches(v(3, 9, 18)));
}

TEST_CASE("VersionSpec: strict upper bound compares only the written components", "[version]") {
  auto spec = VersionSpec::parse("<3.13");
  CHECK(spec.matches(v(3, 12, 99)));
  CHECK(spec.matches(v(3, 9, 0)));
  CHECK_FALSE(spec.matches(v(3, 13, 0)));
  CHECK_FALSE(spec.matches(v(3, 13, 2)));
  CHECK_FALSE(spec.matches(v(3, 14, 0)));

  auto le = VersionSpec::parse("<=3.12");
  CHECK(le.matches(v(3, 12, 9)));
  CHECK_FALSE(le.matches(v(3, 13, 0)));

  auto gt = VersionSpec::parse(">3.12");
  CHECK_FALSE(gt.matches(v(3, 12, 9)));
  CHECK(gt.matches(v(3, 13, 0)));
}

TEST_CASE("VersionSpec: a bare version matches every micro release of it", "[version]") {
  auto spec = VersionSpec::parse("3.12");
  CHECK(spec.matches(v(3, 12, 0)));
  CHECK(spec.matches(v(3, 12, 7)));
  CHECK_FALSE(spec.matches(v(3, 11, 9)));
  CHECK_FALSE(spec.matches(v(3, 13, 0)));

  auto exact = VersionSpec::parse("==3.12.1");
  CHECK(exact.matches(v(3, 12, 1)));
  CHECK_FALSE(exact.matches(v(3, 12, 2)));

  auto bare_exact = VersionSpec::parse("3.12.1");
  CHECK(bare_exact.matches(v(3, 12, 1)));
  CHECK_FALSE(bare_exact.matches(v(3, 12, 0)));
}

TEST_CASE("VersionSpec: comma-separated clauses all have to hold", "[version]") {
  auto spec = VersionSpec::parse(">=3.10,<3.13");
  CHECK_FALSE(spec.matches(v(3, 9, 18)));
  CHECK(spec.matches(v(3, 10, 0)));
  CHECK(spec.matches(v(3, 11, 4)));
  CHECK(spec.matches(v(3, 12, 8)));
  CHECK_FALSE(spec.matches(v(3, 13, 0)));

  auto spaced = VersionSpec::parse(" >= 3.10 , < 3.13 ");
  CHECK(spaced.matches(v(3, 12, 0)));
  CHECK_FALSE(spaced.matches(v(3, 13, 0)));
}

TEST_CASE("VersionSpec: exclusion", "[version]") {
  auto spec = VersionSpec::parse("!=3.11");
  CHECK(spec.matches(v(3, 10, 2)));
  CHECK(spec.matches(v(3, 12, 0)));
  CHECK_FALSE(spec.matches(v(3, 11, 0)));
  CHECK_FALSE(spec.matches(v(3, 11, 9)));
}

TEST_CASE("VersionSpec: bad specs throw std::invalid_argument", "[version]") {
  for (const char* bad : {"", ">=", "3.x", ">=3.10,", "~=3.10", "=>3.10", ">=3.10,<abc", "3.12t", "latest"}) {
    INFO("spec: '" << bad << "'");
    CHECK_THROWS_AS(VersionSpec::parse(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(VersionSpec::parse("3.x"), Catch::Matchers::Contains("bad version spec '3.x'"));
}
