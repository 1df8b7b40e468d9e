#pragma once
// What `gilhost build SOURCE` builds from: a tarball, a URL of one (downloaded into the cache), or a
// CPython source tree; and what such a tree says about itself.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gilhost {

enum class SourceKind { tarball, url, tree };
const char* to_string(SourceKind kind);

struct Source {
  SourceKind kind = SourceKind::tree;
  std::string location;  // an absolute path, or the URL
};

bool has_tarball_suffix(std::string_view name);  // .tar.xz .tar.gz .tgz .tar.bz2 .tar
// An http(s) URL, an existing folder, or an existing tarball; throws bad_input otherwise.
Source classify_source(const std::string& arg);

// PY_VERSION of Include/patchlevel.h's text ("3.14.7", "3.15.0a1+"); nullopt when there is none.
std::optional<std::string> version_from_patchlevel(const std::string& text);
// Empty when `dir` is a CPython source tree (configure and Include/patchlevel.h), else what it lacks.
std::string cpython_tree_problem(const std::string& dir);
// The tree a tarball unpacked into `dir`: its only folder (Python-3.14.7/), or `dir` itself.
std::string unpacked_tree(const std::string& dir);

// The sha256 of the file at `path`; throws bad_input when `expected` (hex, any case) is given and differs
// (naming the file `shown_as`, when given).
std::string verify_sha256(const std::string& path, const std::string& expected, const std::string& shown_as = "");

// The file name a download of `url` is kept under: "<hash of the URL>-<its last path part>".
std::string download_file_name(const std::string& url);
// The tarball of `url` in downloads_dir: kept from an earlier download when its checksum (the one
// recorded beside it, and `expected_sha256` when given) matches, else fetched with curl -fL. Throws
// bad_input when curl fails or the checksum differs; `note` gets a line for the user.
std::string fetch_url(const std::string& url, const std::string& downloads_dir, const std::string& expected_sha256,
                      const std::atomic<int>* interrupt, const std::function<void(const std::string&)>& note);

}  // namespace gilhost
