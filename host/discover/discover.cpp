#include "discover/discover.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

#include "discover/selector.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string home() { return env_or("HOME", "/root"); }

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  auto st = fs::status(p, ec);
  return !ec && fs::is_regular_file(st) && (st.permissions() & fs::perms::owner_exec) != fs::perms::none;
}

// Folders of versions, each with bin/python3 (pyenv and uv share this layout).
void add_versions_dir(const fs::path& dir, const std::string& source, std::vector<Candidate>& out) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  for (const auto& e : entries) {
    for (const char* name : {"bin/python3", "bin/python"}) {
      if (is_executable_file(e / name)) {
        out.push_back({(e / name).string(), source});
        break;
      }
    }
  }
}

// The minor version a candidate's path names (python3.12, versions/3.12.1/bin/python3, 3.14.7t/bin/python3).
std::optional<Version> named_version(const std::string& executable) {
  static const std::regex file_re(R"(python(3\.[0-9]+)t?)");
  static const std::regex folder_re(R"(([0-9]+\.[0-9]+)(\.[0-9]+)?t?)");
  const fs::path p(executable);
  std::smatch m;
  const std::string file = p.filename().string();
  if (std::regex_match(file, m, file_re)) return Version::parse(m[1].str());
  const std::string folder = p.parent_path().parent_path().filename().string();
  if (p.parent_path().filename() == "bin" && std::regex_match(folder, m, folder_re)) return Version::parse(m[1].str());
  return std::nullopt;
}

// Whether a build of version `v` could be picked by `selectors`: only plain versions ("3.12", "3.12.1",
// "3.13t", each also with +gil) rule a build out before it is probed.
bool could_select(const std::vector<std::string>& selectors, const Version& v) {
  if (selectors.empty()) return true;
  for (std::string s : selectors) {
    s = trim(s);
    strip_gil_suffix(s);
    if (s.size() >= 2 && s.back() == 't') s.pop_back();
    const auto dot = s.find('.');
    const auto parsed = Version::parse(s);
    if (dot == std::string::npos || !parsed || !std::isdigit(static_cast<unsigned char>(s[0]))) return true;
    if (parsed->major == v.major && parsed->minor == v.minor) return true;
  }
  return false;
}

}  // namespace

std::vector<Candidate> find_candidates(const DiscoverOptions& o) {
  std::vector<Candidate> raw;
  for (const auto& p : o.explicit_paths) raw.push_back({p, "explicit"});
  for (const auto& p : split(env_or("GILHOST_PYTHONS", ""), ':'))
    if (!p.empty()) raw.push_back({p, "explicit"});

  // gilhost build's folders share pyenv's layout (LABEL/bin/python3).
  if (o.use_gilhost_builds) add_versions_dir(o.builds_dir.empty() ? builds_dir() : o.builds_dir, "gilhost build", raw);
  const std::string pyenv_root = o.pyenv_root.empty() ? env_or("PYENV_ROOT", home() + "/.pyenv") : o.pyenv_root;
  if (o.use_pyenv) add_versions_dir(fs::path(pyenv_root) / "versions", "pyenv", raw);
  if (o.use_uv) {
    std::string uv = o.uv_dir.empty() ? env_or("UV_PYTHON_INSTALL_DIR", env_or("XDG_DATA_HOME", home() + "/.local/share") + "/uv/python")
                                      : o.uv_dir;
    add_versions_dir(uv, "uv", raw);
  }
  if (o.use_path) {
    static const std::regex name_re(R"(python(3(\.[0-9]+t?)?)?)");
    for (const auto& dir : split(o.path_env.empty() ? env_or("PATH", "") : o.path_env, ':')) {
      // pyenv's shims are shell scripts that pick a version by context: the versions folder covers them.
      if (dir.empty() || ends_with(dir, "/shims")) continue;
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) continue;
      std::vector<fs::path> names;
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (std::regex_match(e.path().filename().string(), name_re)) names.push_back(e.path());
      std::sort(names.begin(), names.end());
      for (const auto& p : names)
        if (is_executable_file(p)) raw.push_back({p.string(), "PATH"});
    }
  }

  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (auto& c : raw) {
    std::error_code ec;
    fs::path real = fs::canonical(c.executable, ec);
    std::string key = ec ? c.executable : real.string();
    if (seen.insert(key).second) out.push_back(std::move(c));
  }
  return out;
}

Discovery discover(const DiscoverOptions& o, ProbeCache& cache) {
  Discovery d;
  for (const auto& c : find_candidates(o)) {
    // A build whose path names a version no selector wants is not started (a hung one costs 30 s).
    if (const auto v = named_version(c.executable); v && c.source != "explicit" && !could_select(o.selectors, *v)) continue;
    std::string error;
    if (auto interp = cache.probe(c.executable, c.source, error)) d.found.push_back(std::move(*interp));
    else d.problems.push_back({c.executable, c.source, error});
  }
  cache.save();
  std::stable_sort(d.found.begin(), d.found.end(), [](const Interpreter& a, const Interpreter& b) {
    if (!(a.version == b.version)) return a.version < b.version;
    return a.free_threaded < b.free_threaded;
  });
  assign_labels(d.found);
  return d;
}

}  // namespace gilhost
