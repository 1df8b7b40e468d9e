#include "build/source.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <vector>

#include "build/error.hpp"
#include "util/checksum.hpp"
#include "util/fd.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/temp_dir.hpp"

namespace fs = std::filesystem;

namespace gilhost {

const char* to_string(SourceKind kind) {
  switch (kind) {
    case SourceKind::tarball: return "tarball";
    case SourceKind::url: return "url";
    case SourceKind::tree: return "tree";
  }
  return "?";
}

bool has_tarball_suffix(std::string_view name) {
  for (const char* s : {".tar.xz", ".tar.gz", ".tgz", ".tar.bz2", ".tar"})
    if (ends_with(name, s)) return true;
  return false;
}

Source classify_source(const std::string& arg) {
  if (starts_with(arg, "http://") || starts_with(arg, "https://")) return {SourceKind::url, arg};
  if (arg.find("://") != std::string::npos) throw bad_input("only http:// and https:// URLs can be downloaded: " + arg);
  std::error_code ec;
  const fs::file_status st = fs::status(arg, ec);
  if (ec || !fs::exists(st)) throw bad_input("no such file or folder: " + arg);
  const std::string abs = fs::absolute(arg).lexically_normal().string();
  if (fs::is_directory(st)) return {SourceKind::tree, abs};
  if (fs::is_regular_file(st) && has_tarball_suffix(arg)) return {SourceKind::tarball, abs};
  throw bad_input(arg + " is neither a CPython source tree nor a tarball (.tar.xz, .tar.gz, .tgz, .tar.bz2)");
}

std::optional<std::string> version_from_patchlevel(const std::string& text) {
  static const std::regex re(R"re(#\s*define\s+PY_VERSION\s+"([0-9]+\.[0-9]+\.[0-9]+[A-Za-z0-9+]*)")re");
  std::smatch m;
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[1].str();
}

std::string cpython_tree_problem(const std::string& dir) {
  std::vector<std::string> missing;
  for (const char* f : {"configure", "Include/patchlevel.h"})
    if (!fs::is_regular_file(fs::path(dir) / f)) missing.push_back(f);
  return missing.empty() ? "" : "it has no " + join(missing, " and no ");
}

std::string unpacked_tree(const std::string& dir) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
  if (entries.size() == 1 && fs::is_directory(entries.front())) return entries.front().string();
  return dir;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::string verify_sha256(const std::string& path, const std::string& expected, const std::string& shown_as) {
  const std::string actual = sha256_file(path);
  if (!expected.empty() && lower(expected) != actual)
    throw bad_input("the sha256 of " + (shown_as.empty() ? path : shown_as) + " is " + actual + ", not " +
                    lower(expected) + " (--sha256)");
  return actual;
}

std::string download_file_name(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  std::string base = path.substr(path.find_last_of('/') + 1);
  std::string safe;
  for (char c : base)
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' ? c : '_';
  if (safe.empty() || safe[0] == '.') safe = "download" + safe;
  // Two URLs can end in the same name: the hash keeps their files apart.
  return hex64(fnv1a64(url)).substr(0, 8) + "-" + safe;
}

std::string fetch_url(const std::string& url, const std::string& downloads_dir, const std::string& expected_sha256,
                      const std::atomic<int>* interrupt, const std::function<void(const std::string&)>& note) {
  const fs::path file = fs::path(downloads_dir) / download_file_name(url);
  const std::string recorded_path = file.string() + ".sha256";
  std::error_code ec;
  if (fs::is_regular_file(file, ec) && fs::is_regular_file(recorded_path, ec)) {
    const std::string recorded = trim(read_file(recorded_path));
    const std::string actual = sha256_file(file.string());
    if (actual == recorded && (expected_sha256.empty() || actual == lower(expected_sha256))) {
      note("using the download kept in " + file.string());
      return file.string();
    }
  }
  note("downloading " + url);
  // Into a folder of its own beside the final name: an interrupted download leaves nothing, and the
  // finished one is renamed into place.
  TempDir::remove_orphans(downloads_dir);
  TempDir part = TempDir::owned(downloads_dir, "download");
  const std::string part_file = (fs::path(part.path()) / "file").string();
  std::string err;
  ProcessOptions o;
  o.interrupt = interrupt;
  const ProcessResult r = run_process({"curl", "-fsSL", "--retry", "2", "-o", part_file, url}, o,
                                      [&](int, std::string_view d) { err.append(d); });
  if (r.interrupted) throw interrupted(interrupt->load());
  if (r.exit_code != 0) {
    const std::string why = trim(err);
    throw bad_input("cannot download " + url + ": " +
                    (r.exit_code == 127 ? "curl is not installed (apt-get install curl)"
                                        : why.empty() ? "curl exited with status " + std::to_string(r.exit_code)
                                                      : why.substr(why.find_last_of('\n') + 1)));
  }
  const std::string actual = verify_sha256(part_file, expected_sha256, url);
  fs::rename(part_file, file);
  write_file_atomic(recorded_path, actual + "\n");
  return file.string();
}

}  // namespace gilhost
