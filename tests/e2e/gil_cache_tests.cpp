// End to end: the runner's per-build GIL offset cache (runner/gil_offset_cache). A session's first run
// locates the GIL and writes the offset; later runs take it from the cache after checking it, and agree
// with the full locate; a cached offset that fails the check is located again and rewritten; a session
// that starts with the offset cached hands it to each run, which reads no file for it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/gil_offset_cache.hpp"
#include "sandbox.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using e2e::Sandbox;
using nlohmann::json;

namespace {

using Build = e2e::SharedBuild;

// The newest shared-libpython GIL build and the newest free-threaded one gilhost finds.
std::vector<Build> builds() {
  Build gil, ft;
  for (const Build& b : e2e::shared_builds()) (b.free_threaded ? ft : gil) = b;
  std::vector<Build> out;
  for (const Build& b : {gil, ft})
    if (!b.label.empty()) out.push_back(b);
  return out;
}

std::vector<json> session(const Sandbox& sb, const Build& b, const std::string& out, const std::string& toml = "x.toml") {
  const auto r = sb.gilhost("run " + toml + " -p " + b.label + " --no-lock -o " + out);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<json> runs;
  for (const json& line : e2e::json_lines(sb.dir / out))
    if (line.value("type", "") == "run") runs.push_back(line);
  REQUIRE(runs.size() == 3);
  return runs;
}

// Each GIL window of the run as (its start's offset in its page, its width): libpython loads at a
// different page-aligned address in each process (ASLR), so the same offset from the load address shows
// as the same place within a page.
std::vector<std::pair<std::uint64_t, std::uint64_t>> windows_of(const json& run) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const json& w : run.at("thread_states").value("gil_windows", json::array()))
    out.emplace_back(w.at(0).get<std::uint64_t>() % 4096, w.at(1).get<std::uint64_t>() - w.at(0).get<std::uint64_t>());
  return out;
}

// The build's one cache file of GIL offsets in the sandbox's cache.
fs::path cache_file(const Sandbox& sb) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(sb.dir / "cache"))
    if (e.path().filename().string().rfind("gil-", 0) == 0) found.push_back(e.path());
  REQUIRE(found.size() == 1);
  return found[0];
}

}  // namespace

TEST_CASE("GIL offset cache: later runs take the offset a full locate found, checked", "[gil_cache][gil]") {
  const std::vector<Build> found = builds();
  REQUIRE_FALSE(found.empty());
  for (const Build& b : found) {
    INFO(b.label);
    Sandbox sb("gilcache");
    // Long enough for the sampler to read the threads (the record's thread_states and its GIL windows).
    e2e::write_text(sb.dir / "work.py", "import time\ndef noop():\n    time.sleep(0.05)\n");
    e2e::write_text(sb.dir / "x.toml", "[experiment]\nname = \"x\"\nscript = \"work.py\"\nrepeat = 3\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"noop\"\ncall = \"noop\"\n");
    const auto runs = session(sb, b, "a.jsonl");
    CHECK(runs[0].value("locate_cached", true) == false);  // nothing cached yet: located
    for (int i : {1, 2}) {
      CHECK(runs[i].value("locate_cached", false) == true);
      CHECK(windows_of(runs[i]) == windows_of(runs[0]));  // what the full locate found
      CHECK(runs[i].value("locate_ns", 0) > 0);
    }
    CHECK(windows_of(runs[0]).empty() == b.free_threaded);  // a GIL build has its window; 3.14t none

    // A cache whose check fails (the state pointer a word off; on 3.14t, a GIL where there is none): the
    // next run locates again, finds the same window and writes the right offset back.
    const fs::path file = cache_file(sb);
    const auto id = gilhost::library_identity(b.libpython);
    REQUIRE(id);
    // The key says the GIL's state where the build can tell (3.13+).
    std::string key;
    std::optional<gilhost::GilOffset> good;
    for (const std::optional<bool> on : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)})
      if (!good && (good = gilhost::decode_gil_offset(e2e::read_text(file), gilhost::gil_offset_key(*id, on))))
        key = gilhost::gil_offset_key(*id, on);
    REQUIRE(good);
    gilhost::GilOffset bad = *good;
    if (good->has_gil)
      bad.holder_delta += 8;
    else  // a GIL where there is none
      std::tie(bad.has_gil, bad.word_offset, bad.holder_delta) = std::make_tuple(true, 4096, 0);
    e2e::write_text(file, gilhost::encode_gil_offset(key, bad));
    const auto again = session(sb, b, "b.jsonl");
    CHECK(again[0].value("locate_cached", true) == false);
    CHECK(windows_of(again[0]) == windows_of(runs[0]));
    CHECK(again[1].value("locate_cached", false) == true);
    CHECK(gilhost::decode_gil_offset(e2e::read_text(file), key) == good);

    // The offset is handed to each run in its spec, read once when the session starts: runs whose own
    // case spoils the file on disk still take it, checked, and never locate again (read from the disk
    // as before, runs 1 and 2 would find the junk, locate and write the file back).
    e2e::write_text(sb.dir / "spoil.py", "import time\ndef spoil(path):\n    open(path, 'w').write('junk')\n"
                                         "    time.sleep(0.05)\n");
    e2e::write_text(sb.dir / "y.toml", "[experiment]\nname = \"y\"\nscript = \"spoil.py\"\nrepeat = 3\nwarmup = 0\n\n"
                                       "[[case]]\nname = \"spoil\"\ncall = \"spoil\"\nparams = { path = " +
                                           json(file.string()).dump() + " }\n");
    for (const json& run : session(sb, b, "c.jsonl", "y.toml")) {
      CHECK(run.value("locate_cached", false) == true);
      CHECK(windows_of(run) == windows_of(runs[0]));
    }
    CHECK(e2e::read_text(file) == "junk");
  }
}
