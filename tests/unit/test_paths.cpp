// util/paths: the plain-string path helpers a run's cache lookups use instead of std::filesystem say what
// std::filesystem says for the paths gilhost builds.
#include <catch2/catch.hpp>

#include <filesystem>

#include "util/paths.hpp"

using namespace gilhost;
namespace fs = std::filesystem;

TEST_CASE("path_join and parent_folder agree with std::filesystem on plain paths", "[paths]") {
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
