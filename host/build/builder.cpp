#include "build/builder.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <regex>

#include "build/error.hpp"
#include "build/label.hpp"
#include "build/modules.hpp"
#include "build/progress.hpp"
#include "build/smoke.hpp"
#include "build/source.hpp"
#include "build/steps.hpp"
#include "util/clock.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"
#include "util/temp_dir.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

std::string utc_time(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

void check_interrupt(const BuildEnvironment& env) {
  if (env.interrupt && env.interrupt->load() != 0) throw interrupted(env.interrupt->load());
}

// The configure command: the user's arguments after gilhost's own, their LDFLAGS (from the environment,
// which an LDFLAGS= argument would override, then from the arguments) joined to the rpath.
std::vector<std::string> configure_command(const std::string& tree, const std::string& prefix, const BuildRequest& r) {
  // --enable-new-dtags: a RUNPATH, which LD_LIBRARY_PATH overrides, so the smoke test loads the staged
  // libpython even where an older build already sits at the final place (--force).
  std::string ldflags = "LDFLAGS=-Wl,--enable-new-dtags,-rpath," + prefix + "/lib";
  if (const char* env = std::getenv("LDFLAGS"); env && *env) ldflags += std::string(" ") + env;
  std::vector<std::string> rest;
  for (const auto& a : r.configure_args) {
    if (starts_with(a, "LDFLAGS=")) ldflags += " " + a.substr(8);
    else rest.push_back(a);
  }
  std::vector<std::string> cmd{(fs::path(tree) / "configure").string(), "--prefix=" + prefix, "--enable-shared"};
  if (r.free_threaded) cmd.push_back("--disable-gil");
  cmd.push_back(ldflags);
  cmd.insert(cmd.end(), rest.begin(), rest.end());
  return cmd;
}

// logs/LABEL-YYYYMMDD-HHMMSS.log, made now; "-2", "-3"... when builds start in the same second.
std::string new_log_path(const std::string& logs_dir, const std::string& label) {
  fs::create_directories(logs_dir);
  const std::string stem = (fs::path(logs_dir) / (label + "-" + utc_time("%Y%m%d-%H%M%S"))).string();
  for (int n = 1;; ++n) {
    const std::string path = stem + (n == 1 ? "" : "-" + std::to_string(n)) + ".log";
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (fd || errno != EEXIST) return path;
  }
}

// Unpacks the tarball into `into` and returns the source tree in it; bad input when tar cannot read it.
std::string unpack(const std::string& tarball, const std::string& into, const BuildEnvironment& env) {
  fs::create_directories(into);
  std::string err;
  ProcessOptions o;
  o.interrupt = env.interrupt;
  const ProcessResult r = run_process({"tar", "-xf", tarball, "-C", into, "--no-same-owner"}, o,
                                      [&](int, std::string_view d) { err.append(d); });
  check_interrupt(env);
  if (r.exit_code != 0) {
    const std::string first = trim(err.substr(0, err.find('\n')));
    throw bad_input("cannot unpack " + tarball + ": " + (first.empty() ? "tar exited with status " + std::to_string(r.exit_code) : first));
  }
  return unpacked_tree(into);
}

BuildOutcome already_built(const InstalledBuild& b) {
  BuildOutcome out;
  out.label = b.label;
  out.path = b.path;
  out.manifest = *b.manifest;
  return out;
}

// A build of the same source and arguments under the label this request would get: nothing to do. Found
// from the manifests alone, before a tarball is unpacked (which takes a while).
std::optional<InstalledBuild> same_build_installed(const BuildStore& store, const BuildManifest& wanted, const BuildRequest& r) {
  for (const auto& b : store.list()) {
    if (!b.manifest || !b.manifest->same_build_as(wanted)) continue;
    const std::string label = r.label.empty() ? derive_label(b.manifest->version, r.free_threaded, r.configure_args) : r.label;
    if (b.label == label) return b;
  }
  return std::nullopt;
}

[[noreturn]] void step_failed(const std::string& label, const std::string& step, const StepOutcome& o,
                              const std::string& log_path, const std::vector<std::string>& more = {}) {
  std::vector<std::string> details{"last lines of " + log_path + ":"};
  for (const auto& line : o.tail) details.push_back("  " + line);
  details.insert(details.end(), more.begin(), more.end());
  throw BuildError(1, "building " + label + " failed at step " + step + " (" + o.how_it_ended() + "); nothing was installed",
                   details);
}

// The manifest's account of the source (a URL downloaded, a tarball checked against --sha256), and the
// tarball to unpack ("" for a source tree).
BuildManifest describe_source(const BuildRequest& r, const Source& source, const BuildEnvironment& env,
                              std::string& tarball) {
  auto note = [](const std::string& line) { std::fprintf(stderr, "gilhost: %s\n", line.c_str()); };
  BuildManifest m;
  m.free_threaded = r.free_threaded;
  m.source = source.location;
  m.source_kind = to_string(source.kind);
  m.configure_args = r.configure_args;
  m.gilhost_version = env.gilhost_version;
  tarball = source.kind == SourceKind::tarball ? source.location : "";
  if (source.kind == SourceKind::url) tarball = fetch_url(source.location, env.downloads_dir, r.sha256, env.interrupt, note);
  if (!tarball.empty()) m.source_sha256 = verify_sha256(tarball, r.sha256);
  else if (!r.sha256.empty()) throw bad_input("--sha256 checks a tarball; " + r.source + " is a source tree");
  check_interrupt(env);
  return m;
}

// The prefix is compiled into the build: characters that configure or the linker's -rpath would split
// on are refused before a 4-minute build fails on them.
void check_data_folder(const BuildStore& store) {
  static const std::regex plain_path(R"([A-Za-z0-9/._+@~-]+)");
  if (!std::regex_match(store.root(), plain_path))
    throw bad_input("the data folder " + store.root() + " has characters a build prefix cannot take (spaces, commas, quotes); "
                    "point XDG_DATA_HOME at another folder");
}

// The CPython source tree to build (unpacked into `work` from a tarball), its version and label in `m`.
std::string prepare_tree(const BuildRequest& r, const Source& source, const std::string& tarball,
                         const TempDir& work, const BuildEnvironment& env, BuildManifest& m) {
  std::string tree = source.location;
  if (!tarball.empty()) {
    // A few seconds with nothing to say on success: a passing line on a terminal, else nothing.
    if (env.tty) std::fprintf(stderr, "\r\033[Kunpacking %s", tarball.c_str());
    tree = unpack(tarball, (fs::path(work.path()) / "src").string(), env);
    if (env.tty) std::fprintf(stderr, "\r\033[K");
  }
  if (std::string why = cpython_tree_problem(tree); !why.empty())
    throw bad_input((tarball.empty() ? r.source : tarball) + " is not a CPython source tree: " + why);
  const auto version = version_from_patchlevel(read_file((fs::path(tree) / "Include" / "patchlevel.h").string()));
  if (!version) throw bad_input(r.source + " is not a CPython source tree: Include/patchlevel.h has no PY_VERSION");
  m.version = *version;
  m.label = r.label.empty() ? derive_label(*version, r.free_threaded, r.configure_args) : r.label;
  return tree;
}

// A build already at the prefix: the same one (nothing to do), or another that only --force replaces.
std::optional<BuildOutcome> build_at_prefix(const BuildRequest& r, const BuildManifest& m, const std::string& prefix) {
  std::error_code ec;
  if (!fs::exists(prefix, ec)) return std::nullopt;
  const auto there = read_manifest(prefix);
  if (!r.force && there && there->same_build_as(m)) return already_built({m.label, prefix, there});
  if (!r.force)
    throw bad_input(prefix + " holds another build" +
                    (there ? " (of " + there->source + (there->configure_args.empty() ? "" : " with " + join(there->configure_args, " ")) + ")" : "") +
                    "; --force replaces it, --label NAME builds beside it");
  return std::nullopt;
}

// make, with a progress line from the Makefile's count of objects; the modules that did not build.
std::vector<std::string> compile(StepRunner& steps, const BuildManifest& m, const ProcessOptions& in_build,
                                 const std::string& build_dir, const BuildEnvironment& env) {
  std::size_t expected_objects = 0;
  try {
    expected_objects = count_object_targets(read_file((fs::path(build_dir) / "Makefile").string()));
  } catch (const std::exception&) {
    // No Makefile to estimate from: the count alone is shown.
  }
  CompileProgress progress(expected_objects);
  StepOutcome compiled = steps.run("compile", {"make", "-j" + std::to_string(m.jobs)}, in_build, [&](const std::string& line) {
    progress.feed(line);
    return progress.status();
  });
  check_interrupt(env);
  std::vector<std::string> module_lines;
  try {
    module_lines = describe_module_problems(parse_module_problems(read_file(m.log)));
  } catch (const std::exception&) {
    // An unreadable log only loses the hint.
  }
  if (!compiled.ok()) step_failed(m.label, "compile", compiled, m.log, module_lines);
  return module_lines;
}

// The staged python started with its own libpython: it must say it is the version and kind built.
void smoke_test(StepRunner& steps, const BuildManifest& m, const BuildRequest& r, const std::string& staged,
                const BuildEnvironment& env) {
  ProcessOptions smoke_options;
  smoke_options.env = staged_environment(current_environment(), staged);
  smoke_options.interrupt = env.interrupt;
  smoke_options.timeout_s = 120;
  std::string smoke_output;
  StepOutcome smoked = steps.run("smoke test", {(fs::path(staged) / "bin" / "python3").string(), "-c", smoke_source()},
                                 smoke_options, [&](const std::string& line) {
                                   smoke_output += line + "\n";
                                   return std::string();
                                 });
  check_interrupt(env);
  if (!smoked.ok()) step_failed(m.label, "smoke test", smoked, m.log);
  const auto answer = parse_smoke_output(smoke_output);
  const std::string problem = answer ? smoke_problem(*answer, m.version, r.free_threaded, staged)
                                     : "the staged python did not print its answer";
  if (!problem.empty())
    throw BuildError(1, "building " + m.label + " failed at step smoke test: " + problem + "; nothing was installed",
                     {"log: " + m.log});
}

// configure, make, make install into a staging folder and the smoke test, logged step by step; the
// staged prefix, and the modules that did not build in `module_lines`.
std::string build_staged(const BuildRequest& r, const std::string& tree, const std::string& prefix, const TempDir& work,
                         const BuildStore& store, const BuildEnvironment& env, BuildManifest& m,
                         std::vector<std::string>& module_lines) {
  StepRunner steps(new_log_path(store.logs_dir(), m.label), 4, env.tty);
  m.log = steps.log_path();
  m.jobs = r.jobs > 0 ? r.jobs : available_cores();
  const std::vector<std::string> configure = configure_command(tree, prefix, r);
  m.configure_command = configure;
  m.configure_command.front() = "./configure";  // the temporary folder it ran from is gone once built
  steps.note("building " + m.label + " from " + r.source + " into " + prefix + "; log: " + m.log);
  const std::int64_t start = monotonic_ns();

  const std::string build_dir = (fs::path(work.path()) / "build").string();
  const std::string staging = (fs::path(work.path()) / "staging").string();
  fs::create_directories(build_dir);
  ProcessOptions in_build;
  in_build.cwd = build_dir;
  in_build.interrupt = env.interrupt;

  // Out of the source tree: a tree of the user's is left as it was.
  StepOutcome configured = steps.run("configure", configure, in_build);
  check_interrupt(env);
  if (!configured.ok()) step_failed(m.label, "configure", configured, m.log);
  module_lines = compile(steps, m, in_build, build_dir, env);
  StepOutcome installed = steps.run("install", {"make", "install", "DESTDIR=" + staging}, in_build);
  check_interrupt(env);
  if (!installed.ok()) step_failed(m.label, "install", installed, m.log);

  const std::string staged = staging + prefix;
  smoke_test(steps, m, r, staged, env);
  m.build_seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
  return staged;
}

}  // namespace

// source -> tree -> staged build, tested -> installed under its label.
BuildOutcome build_python(const BuildRequest& r, const BuildStore& store, const BuildEnvironment& env) {
  const Source source = classify_source(r.source);
  std::string tarball;
  BuildManifest m = describe_source(r, source, env, tarball);
  if (!r.force)
    if (auto same = same_build_installed(store, m, r)) return already_built(*same);
  check_data_folder(store);

  TempDir::remove_orphans(store.tmp_dir());
  TempDir work = TempDir::owned(store.tmp_dir(), "build");
  const std::string tree = prepare_tree(r, source, tarball, work, env, m);
  const std::string prefix = store.build_path(m.label);
  if (auto same = build_at_prefix(r, m, prefix)) return *same;

  std::vector<std::string> module_lines;
  const std::string staged = build_staged(r, tree, prefix, work, store, env, m, module_lines);
  m.built_at = utc_time("%Y-%m-%dT%H:%M:%SZ");
  write_manifest(staged, m);
  store.install(staged, m.label, r.force);

  BuildOutcome out;
  out.built = true;
  out.label = m.label;
  out.path = prefix;
  out.manifest = m;
  out.warnings = module_lines;
  return out;
}

}  // namespace gilhost
