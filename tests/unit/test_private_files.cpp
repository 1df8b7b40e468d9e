// util/private_files: the plain-string path helpers a run's cache lookups use instead of std::filesystem say
// what std::filesystem says for the paths gilhost builds; the caches' folders are made private.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "util/private_files.hpp"

using namespace gilhost;
namespace fs = std::filesystem;

TEST_CASE("path_join and parent_folder agree with std::filesystem on plain paths", "[private_files]") {
  for (const std::string dir : {"/root/.cache/gilhost/bootstrap", "/tmp/x/", "cache", "a/b", "/"}) {
    const std::string joined = path_join(dir, "gil-0123456789abcdef.offset");
    CHECK(joined == (fs::path(dir) / "gil-0123456789abcdef.offset").string());
    CHECK(parent_folder(joined) == fs::path(joined).parent_path().string());
  }
  CHECK(path_join("", "name") == "name");
  for (const std::string path : {"/a/b/c", "/c", "c", "a/b"})
    CHECK(parent_folder(path) == fs::path(path).parent_path().string());
  CHECK(parent_folder("/a/b/c") == "/a/b");
  CHECK(parent_folder("/c") == "/");
  CHECK(parent_folder("c").empty());
  CHECK(parent_folder("/a//b") == "/a");
}

TEST_CASE("ensure_private_dir makes the missing parents and a folder only this user may write", "[private_files]") {
  char templ[] = "/tmp/gilhost-paths-XXXXXX";
  REQUIRE(::mkdtemp(templ));
  const std::string root = templ;
  const std::string dir = root + "/a/b//c";
  ensure_private_dir(dir);
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 0777) == 0700);
  ensure_private_dir(dir);  // there already: fine
  ::chmod(dir.c_str(), 0777);
  CHECK_THROWS_WITH(ensure_private_dir(dir), Catch::Contains("only you may write"));
  fs::remove_all(root);
}
