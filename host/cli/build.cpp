// gilhost build: CPython into gilhost's data folder; --list, --remove.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "build/builder.hpp"
#include "build/error.hpp"
#include "build/label.hpp"
#include "build/store.hpp"
#include "cli/commands.hpp"
#include "report/table.hpp"
#include "util/gilhost_version.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

// gilhost build stops at the next check (its current step's process group killed), its temporary folders
// removed as the stack unwinds, and exits 128+N.
std::atomic<int> g_build_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "written from a signal handler");

extern "C" void on_build_signal(int sig) { g_build_signal.store(sig); }

int list_builds(const BuildStore& store, bool as_json) {
  const auto builds = store.list();
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : builds)
      j.push_back({{"label", b.label}, {"path", b.path}, {"manifest", b.manifest ? b.manifest->to_json() : nlohmann::json()}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (builds.empty()) {
    std::cout << "no builds in " << store.pythons_dir() << " (gilhost build SOURCE makes one)\n";
    return 0;
  }
  TextTable t({"label", "version", "build", "configure args", "built (UTC)", "took", "source"});
  for (const auto& b : builds) {
    if (!b.manifest) {
      t.add_row({b.label, "?", "?", "", "", "", "no " + std::string(kManifestName) + ": not made by gilhost build"});
      continue;
    }
    const BuildManifest& m = *b.manifest;
    t.add_row({b.label, m.version, m.free_threaded ? "free-threaded" : "GIL", join(m.configure_args, " "), m.built_at,
               format_duration(m.build_seconds), m.source});
  }
  std::cout << t.render() << "in " << store.pythons_dir() << "\n";
  return 0;
}

}  // namespace

int cmd_build(const BuildCommand& bc) {
  if (const std::string why = command_problem(bc); !why.empty()) {
    std::cerr << "gilhost: build: " << why << "\n";
    return 2;
  }
  const BuildStore store(data_dir());
  if (bc.list) return list_builds(store, bc.json);
  if (!bc.remove.empty()) {
    if (!store.remove(bc.remove)) {
      std::cerr << "gilhost: no build labelled " << bc.remove << " in " << store.pythons_dir() << " (gilhost build --list shows them)\n";
      return 2;
    }
    std::cerr << "gilhost: removed " << bc.remove << " (" << store.build_path(bc.remove) << ")\n";
    return 0;
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, on_build_signal);
  std::signal(SIGPIPE, SIG_IGN);  // a reader of our output that goes away must not kill us mid-build
  BuildEnvironment env;
  env.gilhost_version = GILHOST_VERSION;
  env.downloads_dir = (fs::path(cache_dir()) / "downloads").string();
  env.interrupt = &g_build_signal;
  env.tty = ::isatty(2);
  BuildOutcome out;
  try {
    out = build_python(bc.request, store, env);
  } catch (const BuildError& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    for (const auto& line : e.details) std::cerr << line << "\n";
    return e.exit_code;
  } catch (const std::exception& e) {
    std::cerr << "gilhost: build: " << e.what() << "\n";
    return 1;
  }
  if (!out.built) {
    std::cerr << "gilhost: " << out.label << " is already built from the same source and arguments (" << out.path
              << "); --force builds it again\n";
    return 0;
  }
  for (const auto& w : out.warnings) std::cerr << "gilhost: warning: " << w << "\n";
  const std::string python = (fs::path(out.path) / "bin" / "python3").string();
  // A plain label is also a selector; one with a suffix is not (its version is), its path is.
  const bool plain = out.label == derive_label(out.manifest.version, out.manifest.free_threaded, {});
  std::cerr << "gilhost: built " << out.label << " in " << format_duration(out.manifest.build_seconds) << ": " << python << "\n"
            << "gilhost: gilhost pythons lists it; gilhost run CONFIG -p " << (plain ? out.label : python) << " runs on it\n";
  return 0;
}

}  // namespace gilhost
