#pragma once
// A folder of its own for an end-to-end test, removed after it, where gilhost runs as a user would run it
// from there, with a cache (probes, the session lock) of its own.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/subprocess.hpp"

// Whether this build runs under AddressSanitizer (GILHOST_SANITIZE instruments every target alike), which
// reserves terabytes of address space for its shadow: a `ulimit -v` that bounds gilhost stops it at start.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GILHOST_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(GILHOST_TEST_ASAN)
#define GILHOST_TEST_ASAN 1
#endif

namespace e2e {

#ifdef GILHOST_TEST_ASAN
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif

struct Sandbox {
  std::filesystem::path dir;
  explicit Sandbox(const std::string& name) {
    std::string tmpl = "/tmp/gilhost-" + name + "-XXXXXX";
    dir = ::mkdtemp(tmpl.data());
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  ~Sandbox() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  // gilhost ARGS (shell words) run in the sandbox.
  gilhost::Captured gilhost(const std::string& args) const { return gilhost_in_env("", args); }
  // The same with the environment changed as `env ENV_WORDS` changes it ("LC_ALL=C", "-u LANG").
  gilhost::Captured gilhost_in_env(const std::string& env_words, const std::string& args) const {
    const std::string cmd = "cd '" + dir.string() + "' && exec env " + env_words + " XDG_CACHE_HOME='" +
                            (dir / "cache").string() + "' '" + GILHOST_BINARY + "' " + args;
    return gilhost::run_capture({"bash", "-c", cmd}, 600);
  }
};

// A build gilhost finds that runs embedded (supported, with a shared libpython), as `gilhost pythons --json`
// lists it.
struct SharedBuild {
  std::string label, executable, libpython;
  bool free_threaded = false;
};

// Every such build, in the order gilhost lists them (oldest first).
inline std::vector<SharedBuild> shared_builds() {
  std::vector<SharedBuild> out;
  const auto c = gilhost::run_capture({GILHOST_BINARY, "pythons", "--json"}, 300);
  const nlohmann::json list = nlohmann::json::parse(c.out, nullptr, false);
  if (list.is_array())
    for (const auto& i : list)
      if (i.value("supported", false) && i.value("shared", false) && !i.value("libpython", "").empty())
        out.push_back({i.value("label", ""), i.value("executable", ""), i.value("libpython", ""),
                       i.value("free_threaded", false)});
  return out;
}

// `python SCRIPT` of build `b` in the sandbox's folder, as a user runs it there, with the environment
// changed as `env ENV_WORDS` changes it: what gilhost's runs of SCRIPT are compared with.
inline gilhost::Captured python_script(const SharedBuild& b, const Sandbox& sb, const std::string& script,
                                       const std::string& env_words = "") {
  return gilhost::run_capture(
      {"bash", "-c", "cd '" + sb.dir.string() + "' && exec env " + env_words + " '" + b.executable + "' " + script}, 60);
}

// A GIL build that runs embedded: the newest gilhost finds ("" when none).
inline std::string embeddable_build() {
  static const std::string label = [] {
    std::string best;
    for (const SharedBuild& b : shared_builds())
      if (!b.free_threaded) best = b.label;
    return best;
  }();
  return label;
}

// A file of the test's own, written or read whole.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every line of a results file, parsed.
inline std::vector<nlohmann::json> json_lines(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// The run records of a results file (its lines of type "run"), in order.
inline std::vector<nlohmann::json> run_records(const std::filesystem::path& file) {
  std::vector<nlohmann::json> out;
  for (nlohmann::json& line : json_lines(file))
    if (line.value("type", "") == "run") out.push_back(std::move(line));
  return out;
}

// Whether `text` holds `needle` (an output line, a message).
inline bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

}  // namespace e2e
