// runner/bootstrap_cache: the on-disk form of the compiled bootstrap, and what it refuses to load.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "helpers.hpp"
#include "runner/bootstrap.hpp"
#include "runner/bootstrap_cache.hpp"
#include "util/checksum.hpp"
#include "util/fd.hpp"

using namespace gilhost;

namespace {
const std::string kVersion = "3.13.0 (main, Oct 10 2024, 12:00:00) [GCC 12.2.0]";
// Marshalled code is binary: NULs and newlines included.
const std::string kPayload = std::string("\xe3\x00\x00\x00\n\nsome\0code", 15);
}  // namespace

TEST_CASE("bootstrap cache: a file round-trips for its own version only", "[bootstrap_cache]") {
  const std::string file = encode_bootstrap_cache(kVersion, kPayload);
  auto back = decode_bootstrap_cache(file, kVersion);
  REQUIRE(back);
  CHECK(*back == kPayload);
  CHECK_FALSE(decode_bootstrap_cache(file, "3.13.1 (main, Oct 10 2024, 12:00:00) [GCC 12.2.0]"));
  CHECK_FALSE(decode_bootstrap_cache(file, kVersion + " experimental free-threading build"));
  // An empty payload is a valid file too (decode does not judge what marshal holds).
  CHECK(decode_bootstrap_cache(encode_bootstrap_cache(kVersion, ""), kVersion) == std::string());
}

TEST_CASE("bootstrap cache: torn, corrupt or foreign files are refused", "[bootstrap_cache]") {
  const std::string file = encode_bootstrap_cache(kVersion, kPayload);
  for (std::size_t cut = 0; cut < file.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK_FALSE(decode_bootstrap_cache(file.substr(0, cut), kVersion));
  }
  for (std::size_t i = file.size() - kPayload.size(); i < file.size(); ++i) {
    std::string flipped = file;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x20);
    INFO("flipped byte " << i);
    CHECK_FALSE(decode_bootstrap_cache(flipped, kVersion));
  }
  CHECK_FALSE(decode_bootstrap_cache(file + "x", kVersion));
  // The format before this one (its payload checked byte by byte) is refused, not misread.
  CHECK_FALSE(decode_bootstrap_cache("gilhost-bootstrap 1\n" + file.substr(file.find('\n') + 1), kVersion));
  CHECK_FALSE(decode_bootstrap_cache("", kVersion));
}

TEST_CASE("bootstrap cache: the key is the source's hash, the payload check sees every byte", "[bootstrap_cache]") {
  // Computed by the compiler, equal to the hash of the text the runner compiles.
  CHECK(bootstrap_source_hash() == fnv1a64(bootstrap_source() + '\0'));
  std::string data(203, '\0');  // 25 words and a 3-byte tail
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  const std::uint64_t clean = fnv1a64_words(data);
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (const int bit : {0x01, 0x80}) {
      std::string flipped = data;
      flipped[i] = static_cast<char>(static_cast<unsigned char>(flipped[i]) ^ bit);
      INFO("byte " << i << " bit " << bit);
      CHECK(fnv1a64_words(flipped) != clean);
    }
  }
  CHECK(fnv1a64_words(data.substr(0, 202)) != clean);  // a cut changes it too
}

TEST_CASE("bootstrap cache: one file per build, written atomically, never throwing", "[bootstrap_cache]") {
  gilhost_test::TempDir dir;
  const std::string a = bootstrap_cache_path(dir.str(), kVersion);
  const std::string b = bootstrap_cache_path(dir.str(), "3.9.18 (main, Jan 1 2024, 00:00:00) [GCC 12.2.0]");
  CHECK(a != b);
  CHECK(a == bootstrap_cache_path(dir.str(), kVersion));
  CHECK(a.rfind(dir.str() + "/bootstrap-", 0) == 0);

  CHECK_FALSE(read_bootstrap_cache(a, kVersion));  // no file yet
  const std::string nested = bootstrap_cache_path(dir.str() + "/made/here", kVersion);
  REQUIRE(write_bootstrap_cache(nested, kVersion, kPayload));  // creates the folders
  const std::optional<CachedBootstrap> back = read_bootstrap_cache(nested, kVersion);
  REQUIRE(back);
  CHECK(back->marshalled == kPayload);
  CHECK_FALSE(read_bootstrap_cache(nested, "another build"));
  // Only the file itself is left: no temporary beside it.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "made/here")) entries += e.is_regular_file();
  CHECK(entries == 1);

  // A file cut short (a crash mid-write of an older gilhost, a full disk) reads as absent.
  const std::string whole = read_file(nested);
  write_file_atomic(nested, whole.substr(0, whole.size() - 3));
  CHECK_FALSE(read_bootstrap_cache(nested, kVersion));

  // Where nothing can be written, the answer is false, not an exception.
  CHECK_FALSE(write_bootstrap_cache("/proc/self/no/such/dir/bootstrap-x.marshal", kVersion, kPayload));
}
