#include "discover/discover.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

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
