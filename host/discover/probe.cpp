#include "discover/probe.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "util/fd.hpp"
#include "util/paths.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {
// The probe: what the host asks of each build, run by that build's own python.
constexpr const char* kProbeSource = R"PY(
import json, os, sys, sysconfig
cv = sysconfig.get_config_var
libdir = cv("LIBDIR") or ""
dirs = [libdir, os.path.join(libdir, cv("MULTIARCH") or ""), cv("LIBPL") or "", os.path.join(sys.base_prefix, "lib")]
lib = ""
if cv("Py_ENABLE_SHARED"):
    for d in dirs:
        for name in (cv("INSTSONAME"), cv("LDLIBRARY")):
            if d and name and ".so" in name and os.path.isfile(os.path.join(d, name)):
                lib = lib or os.path.join(d, name)
print(json.dumps({
    "gilhost_probe": 1,
    "implementation": sys.implementation.name,
    "version": "%d.%d.%d" % sys.version_info[:3],
    "release": sys.version.split()[0],
    "free_threaded": bool(cv("Py_GIL_DISABLED")),
    "libpython": lib,
    "prefix": sys.prefix,
    "compiler": cv("CC") or "",
    "build_flags": cv("CONFIG_ARGS") or "",
}))
)PY";
}  // namespace

const char* probe_source() { return kProbeSource; }

bool parse_probe_output(const std::string& output, Interpreter& out) {
  auto j = nlohmann::json::parse(output, nullptr, false);
  if (!j.is_object() || !j.contains("gilhost_probe")) return false;
  out.implementation = j.value("implementation", "");
  out.version_full = j.value("version", "");
  auto v = Version::parse(out.version_full);
  if (!v) return false;
  out.version = *v;
  out.free_threaded = j.value("free_threaded", false);
  out.libpython = j.value("libpython", "");
  out.shared = !out.libpython.empty();
  out.prefix = j.value("prefix", "");
  out.compiler = j.value("compiler", "");
  out.build_flags = j.value("build_flags", "");
  classify_support(out);
  return true;
}

namespace {

// "SIZE|MTIME" of a file, "" when it is none: what a cached libpython must still be to be loaded.
std::string file_identity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  return std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// Whether a cached answer still describes the build: its libpython is the file the probe found.
bool still_true(const nlohmann::json& entry, const Interpreter& interp) {
  if (interp.libpython.empty()) return true;
  const auto id = entry.find("libpython_id");
  return id != entry.end() && id->is_string() && *id == file_identity(interp.libpython);
}

}  // namespace

ProbeCache::ProbeCache(std::string path, bool enabled) : path_(std::move(path)), enabled_(enabled) {
  if (!enabled_) return;
  try {
    // Only a file of ours that no one else may write, never through a link or a FIFO: what it says is run.
    const auto text = read_private_file(path_);
    if (!text) return;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_object() && j.value("format", 0) == 1 && j.contains("entries")) {
      entries_ = j["entries"];
      if (j.contains("failed") && j["failed"].is_object()) failed_ = j["failed"];
    }
  } catch (const std::exception&) {
    // No cache yet, or unreadable: probe afresh.
  }
}

std::string ProbeCache::default_path() { return (fs::path(cache_dir()) / "interpreters.json").string(); }

std::optional<Interpreter> ProbeCache::probe(const std::string& executable, const std::string& source, std::string& error) {
  std::error_code ec;
  fs::path real = fs::canonical(executable, ec);
  struct stat st {};
  if (ec || ::stat(real.c_str(), &st) != 0) {
    error = "not found";
    return std::nullopt;
  }
  if (!(st.st_mode & S_IXUSR)) {
    error = "not executable";
    return std::nullopt;
  }
  // The same real file can be reached as different names (a venv's python): key on both.
  const std::string key = executable + "|" + real.string() + "|" + std::to_string(st.st_size) + "|" +
                          std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  Interpreter interp;
  if (enabled_ && failed_.contains(key) && failed_[key].is_string()) {
    error = failed_[key].get<std::string>();
    return std::nullopt;
  }
  if (enabled_ && entries_.contains(key)) interp = Interpreter::from_json(entries_[key]);
  if (enabled_ && entries_.contains(key) && still_true(entries_[key], interp)) {
    classify_support(interp);
  } else {
    interp = Interpreter{};
    Captured c = run_capture({executable, "-I", "-c", probe_source()}, 30.0);
    if (c.timed_out) {
      error = "the probe timed out after 30 s";
      if (enabled_) {  // as any failed probe: a hung build costs the 30 s once, not every session
        failed_[key] = error;
        dirty_ = true;
      }
      return std::nullopt;
    }
    if (c.exit_code != 0 || !parse_probe_output(c.out, interp)) {
      std::string first_line = c.err.substr(0, c.err.find('\n'));
      error = "the probe failed (exit " + std::to_string(c.exit_code) + (first_line.empty() ? "" : ": " + first_line) + ")";
      if (enabled_) {
        failed_[key] = error;
        dirty_ = true;
      }
      return std::nullopt;
    }
    interp.executable = executable;
    interp.realpath = real.string();
    if (enabled_) {
      entries_[key] = interp.to_json();
      entries_[key]["libpython_id"] = file_identity(interp.libpython);
      dirty_ = true;
    }
  }
  interp.executable = executable;
  interp.realpath = real.string();
  interp.source = source;
  return interp;
}

void ProbeCache::save() {
  if (!enabled_ || !dirty_) return;
  try {
    ensure_private_dir(fs::path(path_).parent_path().string());
    write_file_atomic(path_, nlohmann::json{{"format", 1}, {"entries", entries_}, {"failed", failed_}}.dump(1));
    dirty_ = false;
  } catch (const std::exception&) {
    // A cache that cannot be written only costs a re-probe next time.
  }
}

}  // namespace gilhost
