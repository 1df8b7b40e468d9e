// runner/gil_offset_cache: the on-disk form of one build's GIL offset, its key, and the segment check a
// run makes before it reads at a cached offset.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "helpers.hpp"
#include "runner/gil_offset_cache.hpp"

using namespace gilhost;

namespace {
const std::string kId = "dev=2049 ino=42 size=100 mtime=1.5 glibc=2.36";

GilOffset with_gil(std::uint64_t word, std::int64_t delta) {
  GilOffset o;
  o.word_offset = word;
  o.holder_delta = delta;
  o.object = "/opt/py/lib/libpython3.12.so.1.0";
  return o;
}

// Written to by the test, so it lives in a writable segment of this program's image.
long g_writable_word = 0;

std::uintptr_t base_of(const void* address) {
  Dl_info info{};
  REQUIRE(::dladdr(address, &info) != 0);
  return reinterpret_cast<std::uintptr_t>(info.dli_fbase);
}
}  // namespace

TEST_CASE("GIL offset cache: a file round-trips for its own library only", "[gil_offset_cache]") {
  const GilOffset gil = with_gil(0x5d1a48, -64);
  CHECK(decode_gil_offset(encode_gil_offset(kId, gil), kId) == gil);
  GilOffset none;
  none.has_gil = false;
  CHECK(decode_gil_offset(encode_gil_offset(kId, none), kId) == none);
  // Any other identity (another file, the same file changed) is a miss.
  CHECK_FALSE(decode_gil_offset(encode_gil_offset(kId, gil), kId + "x"));
  CHECK_FALSE(decode_gil_offset(encode_gil_offset(kId, gil), "dev=2049 ino=42 size=101 mtime=1.5 glibc=2.36"));
  // The object's path comes back as written, spaces and all; one with a newline is never written.
  GilOffset spaced = gil;
  spaced.object = "/opt/my py/lib/libpython3.12.so.1.0";
  CHECK(decode_gil_offset(encode_gil_offset(kId, spaced), kId)->object == spaced.object);
  gilhost_test::TempDir dir;
  GilOffset broken = gil;
  broken.object = "/opt/py\nnogil";
  CHECK_FALSE(write_gil_offset(dir.str() + "/cache/gil.offset", kId, broken));
}

TEST_CASE("GIL offset cache: torn, corrupt or forged files are refused", "[gil_offset_cache]") {
  const std::string file = encode_gil_offset(kId, with_gil(123456, 16));
  for (std::size_t cut = 0; cut < file.size(); ++cut) {
    INFO("cut at " << cut);
    CHECK_FALSE(decode_gil_offset(file.substr(0, cut), kId));
  }
  for (std::size_t i = 0; i < file.size(); ++i) {
    std::string flipped = file;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
    INFO("flipped byte " << i);
    CHECK_FALSE(decode_gil_offset(flipped, kId));
  }
  CHECK_FALSE(decode_gil_offset(file + "x\n", kId));
  CHECK_FALSE(decode_gil_offset("", kId));
}

TEST_CASE("GIL offset cache: a changed library is a miss, the same one a hit", "[gil_offset_cache]") {
  gilhost_test::TempDir dir;
  const std::string lib = dir.str() + "/libfake.so";
  std::ofstream(lib) << "first build";
  const auto before = library_identity(lib);
  REQUIRE(before);
  // Through a symlink: the same file, the same key; its real path resolved only when asked.
  std::filesystem::create_symlink(lib, dir.str() + "/link.so");
  CHECK(library_identity(dir.str() + "/link.so")->key == before->key);
  CHECK(real_path_of(dir.str() + "/link.so") == std::filesystem::canonical(lib).string());
  CHECK(real_path_of(dir.str() + "/missing.so").empty());
  // A cached object path names the file until the file is moved: the same inode, the same key, but the
  // path a run's gil event would name (and workers' maps are searched for) is gone.
  CHECK(names_file(lib, *before));
  CHECK(names_file(dir.str() + "/link.so", *before));
  CHECK_FALSE(names_file("", *before));
  std::filesystem::rename(lib, dir.str() + "/moved.so");
  CHECK(library_identity(dir.str() + "/moved.so")->key == before->key);
  CHECK_FALSE(names_file(lib, *before));
  CHECK(names_file(dir.str() + "/moved.so", *before));
  std::filesystem::rename(dir.str() + "/moved.so", lib);
  CHECK_FALSE(library_identity(dir.str() + "/missing.so"));

  const std::string path = gil_offset_cache_path(dir.str() + "/cache", before->key);
  CHECK_FALSE(read_gil_offset(path, before->key));  // no file yet
  REQUIRE(write_gil_offset(path, before->key, with_gil(4096, 8)));
  CHECK(read_gil_offset(path, before->key) == with_gil(4096, 8));

  std::ofstream(lib, std::ios::app) << ", rebuilt";  // a new size (and mtime): another identity
  const auto after = library_identity(lib);
  REQUIRE(after);
  CHECK(after->key != before->key);
  CHECK(gil_offset_cache_path(dir.str() + "/cache", after->key) != path);
  CHECK_FALSE(read_gil_offset(path, after->key));  // even at the old file's path
  // A cache file others may write is not trusted.
  ::chmod(path.c_str(), 0666);
  CHECK_FALSE(read_gil_offset(path, before->key));
}

TEST_CASE("GIL offset cache: the orchestrator hands a run its build's offsets, and no other build's",
          "[gil_offset_cache]") {
  gilhost_test::TempDir dir;
  const std::string cache = dir.str() + "/cache";
  const std::string lib = dir.str() + "/libpython3.13.so", other = dir.str() + "/libother.so";
  std::ofstream(lib) << "a build";
  std::ofstream(other) << "another build";
  CHECK(handed_gil_offsets(cache, lib).empty());  // nothing cached yet
  const auto id = library_identity(lib), other_id = library_identity(other);
  REQUIRE(id);
  REQUIRE(other_id);
  // A build of 3.13+ whose key says the GIL is on, and the same file with the GIL off; another build's.
  const std::string on = gil_offset_key(*id, true), off = gil_offset_key(*id, false);
  GilOffset at = with_gil(4096, 8), none;
  at.object = lib;
  none.has_gil = false;
  none.object = lib;
  REQUIRE(write_gil_offset(gil_offset_cache_path(cache, on), on, at));
  REQUIRE(write_gil_offset(gil_offset_cache_path(cache, off), off, none));
  GilOffset others = with_gil(64, 0);
  others.object = other;
  REQUIRE(write_gil_offset(gil_offset_cache_path(cache, other_id->key), other_id->key, others));
  const std::vector<HandedGilOffset> handed = handed_gil_offsets(cache, lib);
  REQUIRE(handed.size() == 2);
  CHECK(handed[0] == HandedGilOffset{true, at});
  CHECK(handed[1] == HandedGilOffset{false, none});
  REQUIRE(handed_gil_offsets(cache, other).size() == 1);
  CHECK(handed_gil_offsets(cache, other)[0] == HandedGilOffset{std::nullopt, others});  // a build before 3.13
  CHECK(handed_gil_offsets("", lib).empty());  // no cache: the run locates
  CHECK(handed_gil_offsets(cache, dir.str() + "/missing.so").empty());
  // A file others may write is not handed over, as a run would not read it; nor is an offset whose
  // object no longer names the file (moved since: a run's gil event would name a path that is gone).
  ::chmod(gil_offset_cache_path(cache, on).c_str(), 0666);
  CHECK(handed_gil_offsets(cache, lib).size() == 1);
  GilOffset moved = none;
  moved.object = dir.str() + "/gone.so";
  REQUIRE(write_gil_offset(gil_offset_cache_path(cache, off), off, moved));
  CHECK(handed_gil_offsets(cache, lib).empty());
}

TEST_CASE("GIL offset cache: a cached offset is read only inside a writable segment", "[gil_offset_cache]") {
  g_writable_word = 1;
  const std::uintptr_t base = base_of(&g_writable_word);
  const std::uint64_t offset = reinterpret_cast<std::uintptr_t>(&g_writable_word) - base;
  CHECK(in_writable_segment(base, offset, sizeof g_writable_word));
  // Code is not writable; far past the image, or wrapping around, is nowhere.
  const auto code = reinterpret_cast<std::uintptr_t>(&base_of);
  CHECK_FALSE(in_writable_segment(base_of(reinterpret_cast<const void*>(code)), code - base_of(reinterpret_cast<const void*>(code)), 8));
  CHECK_FALSE(in_writable_segment(base, offset + (std::uint64_t{1} << 40), 8));
  CHECK_FALSE(in_writable_segment(base, UINT64_MAX - 2, 8));
  // A base no object is loaded at.
  CHECK_FALSE(in_writable_segment(base + 1, offset - 1, 8));
}

TEST_CASE("GIL offset cache: object_base_of says where an object begins, as dladdr does", "[gil_offset_cache]") {
  // This program's data and code, and the C library's code.
  for (const void* address : {static_cast<const void*>(&g_writable_word), reinterpret_cast<const void*>(&base_of),
                              reinterpret_cast<const void*>(&::getpid)})
    CHECK(object_base_of(address) == base_of(address));
  CHECK(object_base_of(&g_writable_word) != object_base_of(reinterpret_cast<const void*>(&::getpid)));
  // Memory no object holds: the heap.
  const auto heap = std::make_unique<long>(1);
  Dl_info info{};
  CHECK(::dladdr(heap.get(), &info) == 0);
  CHECK(object_base_of(heap.get()) == 0);
}
