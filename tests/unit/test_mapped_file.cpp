// util/mapped_file and util/paths' read_private_file: the runner's caches are read only when they are
// files of ours that no one else may write, whichever way they are read.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "util/fd.hpp"
#include "util/mapped_file.hpp"
#include "util/paths.hpp"

using namespace gilhost;

TEST_CASE("a private file maps and reads whole; anything not safely ours does not", "[mapped_file]") {
  gilhost_test::TempDir dir;
  ::chmod(dir.str().c_str(), 0700);
  const std::string path = (dir / "cache").string();
  std::string text(70000, '\0');  // past one page and past the 64 KiB a read took at a time before
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 23);
  write_file_atomic(path, text);

  const std::optional<MappedFile> map = MappedFile::open_private(path);
  REQUIRE(map);
  CHECK(map->bytes() == text);
  CHECK(read_private_file(path) == text);
  // Moved, the map goes with it (the bytes stay where they are) and the old owner holds none.
  std::optional<MappedFile> moved = MappedFile::open_private(path);
  REQUIRE(moved);
  const char* where = moved->bytes().data();
  MappedFile owner = std::move(*moved);
  CHECK(owner.bytes().data() == where);
  CHECK(owner.bytes() == text);
  CHECK(moved->bytes().empty());

  write_file_atomic((dir / "empty").string(), "");
  const std::optional<MappedFile> empty = MappedFile::open_private((dir / "empty").string());
  REQUIRE(empty);
  CHECK(empty->bytes().empty());
  CHECK(read_private_file((dir / "empty").string()) == std::string());

  CHECK_FALSE(MappedFile::open_private((dir / "absent").string()));
  CHECK_FALSE(read_private_file((dir / "absent").string()));
  // A link is not followed, even to a file of ours.
  REQUIRE(::symlink(path.c_str(), (dir / "link").c_str()) == 0);
  CHECK_FALSE(MappedFile::open_private((dir / "link").string()));
  CHECK_FALSE(read_private_file((dir / "link").string()));
  // Writable by others: someone else could have put code in it.
  ::chmod(path.c_str(), 0666);
  CHECK_FALSE(MappedFile::open_private(path));
  CHECK_FALSE(read_private_file(path));
  ::chmod(path.c_str(), 0600);
  // In a folder others may write, the file could be swapped between the check and the read.
  ::chmod(dir.str().c_str(), 0777);
  CHECK_FALSE(MappedFile::open_private(path));
  CHECK_FALSE(read_private_file(path));
  ::chmod(dir.str().c_str(), 0700);
  CHECK(MappedFile::open_private(path));
}
