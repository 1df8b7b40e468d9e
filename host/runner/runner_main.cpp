// gilhost-runner: the child process of one measured run.
//
// It loads one build's libpython with dlopen (never linked), initialises it as `python` would, runs the
// case in the main interpreter or in N subinterpreters, and reports the protocol's events (host/protocol)
// as JSON lines on an inherited fd: ready after initialisation; case, bracketed with CLOCK_MONOTONIC and
// getrusage, with its outcome; finalized; or error when the runner itself cannot do its job (exit status 3).
// Its exit status is the case's (SystemExit code, 1 for an exception).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "runner/cpu_delta.hpp"
#include "util/clock.hpp"
#include "protocol/codec.hpp"
#include "python/capi.hpp"
#include "python/library.hpp"
#include "runner/gil_locator.hpp"
#include "runner/interpreter_session.hpp"
#include "runner/runspec.hpp"
#include "runner/scoped_interpreter.hpp"
#include "runner/subinterpreters.hpp"
#include "util/fd.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GILHOST_RUNNER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(GILHOST_RUNNER_ASAN)
#define GILHOST_RUNNER_ASAN 1
#endif
#ifdef GILHOST_RUNNER_ASAN
// Under ASan (GILHOST_SANITIZE), for the runner only: CPython does not free everything at exit, by
// design, so leak reports would be about libpython, not us; and a script's crash must stay a crash (a
// signal the host records as "crashed"), not become ASan's report and exit status 1. The rest of ASan
// stays on; ASAN_OPTIONS still wins.
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
}
#endif

namespace {

constexpr int kRunnerFailure = 3;

// `fd` again at 1024 or above, close-on-exec: out of reach of daemon-style code's os.closerange(3, 1024).
// `fd` itself where the limit on descriptors is no higher.
int dup_high(int fd) {
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 1024);
  return high >= 0 ? high : fd;
}

// A system call for each event (1-3 us here), where pthread_atfork, to take it once and again in a child
// of fork(), cost a run 45 us at its first call.
pid_t own_pid() { return ::getpid(); }

struct EventChannel {
  int fd = -1;
  // What fd was at start (device, inode): a script that closed it and opened a file that got its number
  // must not receive our events in that file.
  dev_t dev = 0;
  ino_t ino = 0;
  // gilhost's token for this run (--token): with our pid, what tells our events from anyone else's.
  std::string token;
  // Events go to a copy of `event_fd` high up; `event_fd` stays open (close-on-exec), as scripts knew it.
  void open(int event_fd) {
    struct stat st {};
    if (event_fd < 0 || ::fstat(event_fd, &st) != 0) return;
    gilhost::set_cloexec(event_fd);  // processes the case starts must not hold our event pipe open
    fd = dup_high(event_fd);
    dev = st.st_dev;
    ino = st.st_ino;
  }
  bool still_ours() const {
    struct stat st {};
    return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
  }
  void send(const gilhost::protocol::Event& event) const {
    // A process forked in the case that reaches here is not the runner: its events carry its own pid,
    // which gilhost does not take.
    if (still_ours()) gilhost::write_all(fd, gilhost::protocol::encode(event, {own_pid(), token}) + "\n");
  }
};

using Stage = gilhost::protocol::RunnerStage;

// The token gilhost left in the pipe at `fd` (--token-fd), read to its end; the pipe is closed, so the
// case finds it neither there nor on our command line.
std::string read_token(int fd) {
  std::string token;
  char buf[256];
  ssize_t n;
  while (token.size() < 4096 && ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) token.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return token;
}

// Ends the runner without finalising Python (its state is unknown; the process is ending anyway).
[[noreturn]] void fail(const EventChannel& events, Stage stage, const std::string& message) {
  events.send(gilhost::protocol::RunnerErrorEvent{stage, message});
  std::fprintf(stderr, "gilhost-runner: %s: %s\n", gilhost::protocol::to_string(stage), message.c_str());
  std::exit(kRunnerFailure);
}

int usage() {
  std::fprintf(stderr,
               "usage: gilhost-runner --event-fd FD [--watch-fd FD] [--token-fd FD | --token TOKEN] --spec JSON\n"
               "The child process of one gilhost run; gilhost starts it, people need not.\n");
  return 2;
}

// What every case event carries about the start-up.
struct Startup {
  std::int64_t init_ns = 0;
  std::int64_t bootstrap_ns = 0;
  bool bootstrap_cached = false;

  void stamp(gilhost::protocol::CaseEvent& event) const {
    event.init_ns = init_ns;
    event.bootstrap_ns = bootstrap_ns;
    event.bootstrap_cached = bootstrap_cached;
  }
};

// The main-interpreter case: prepare (import), then the bracketed call, then the outcome. Returns the
// case's exit status.
int run_in_main(const gilhost::py::Api& api, const gilhost::RunnerSpec& spec, const gilhost::BootstrapCode& code,
                const EventChannel& events, const Startup& startup, bool gil_off_at_start) {
  const std::int64_t boot_start = gilhost::monotonic_ns();
  gilhost::Bootstrap boot(api, spec, 0, code);
  if (!boot.ok()) fail(events, Stage::bootstrap, boot.error());
  const std::int64_t namespace_ns = gilhost::monotonic_ns() - boot_start;
  if (spec.locate_gil) gilhost::watch_script_interpreters(api);  // from the script's import on
  const std::int64_t prepare_start = gilhost::monotonic_ns();
  if (!boot.call("_prepare")) fail(events, Stage::bootstrap, "_prepare failed (traceback on stderr)");
  const std::int64_t prepare_ns = gilhost::monotonic_ns() - prepare_start;

  const gilhost::CpuUsage before = gilhost::CpuUsage::now();
  const std::int64_t start = gilhost::monotonic_ns();
  const bool ran = boot.call("_run");
  const std::int64_t end = gilhost::monotonic_ns();
  const gilhost::CpuUsage after = gilhost::CpuUsage::now();
  if (!ran) fail(events, Stage::bootstrap, "_run failed (traceback on stderr)");

  gilhost::protocol::CaseEvent event;
  event.outcome_json = boot.finish();  // gilhost decodes it
  if (event.outcome_json.empty()) fail(events, Stage::bootstrap, "_finish failed (traceback on stderr)");
  const std::int64_t exit_code = boot.exit_code();
  const bool gil_on_at_end = boot.gil_enabled_after().value_or(false);
  event.mode = gilhost::protocol::RunMode::embed;
  event.start_ns = start;
  event.end_ns = end;
  event.wall_ns = end - start;
  event.prepare_ns = prepare_ns;
  event.cpu = gilhost::cpu_delta(before, after);
  startup.stamp(event);
  event.bootstrap_ns = startup.bootstrap_ns + namespace_ns;  // reading its code, then running it in a namespace
  events.send(event);
  // A free-threaded build's GIL turned on during the case (an extension without Py_mod_gil): located now,
  // for the whole run (the interpreter's GIL does not move).
  if (gil_off_at_start && gil_on_at_end) {
    gilhost::protocol::GilEvent again = gilhost::locate_gil(api, 0);
    again.after_case = true;
    events.send(again);
  }
  // Interpreters the script made (own GILs, on a build with one): not located.
  if (spec.locate_gil && (!gil_off_at_start || gil_on_at_end))
    if (const auto others = gilhost::script_interpreters(api)) events.send(*others);
  return static_cast<int>(exit_code);
}

}  // namespace

namespace {

// What the command line says: the descriptors gilhost handed over, and the spec.
struct RunnerArgs {
  std::string spec_text;
  int event_fd = -1, watch_fd = -1;
};

// false on a word it does not know (then usage).
bool parse_args(int argc, char** argv, RunnerArgs& args, EventChannel& events) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--event-fd") == 0 && i + 1 < argc) {
      args.event_fd = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--watch-fd") == 0 && i + 1 < argc) {
      args.watch_fd = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--token") == 0 && i + 1 < argc) {
      events.token = argv[++i];
    } else if (std::strcmp(argv[i], "--token-fd") == 0 && i + 1 < argc) {
      events.token = read_token(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--spec") == 0 && i + 1 < argc) {
      args.spec_text = argv[++i];
    } else {
      return false;
    }
  }
  return !args.spec_text.empty();
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t main_at = gilhost::monotonic_ns();
  // gilhost execs us through a descriptor (run/child.cpp), and older kernels name the process after the
  // descriptor's number ("7"); threads the case starts inherit the name, and the thread table shows it.
  ::prctl(PR_SET_NAME, "gilhost-runner");
  EventChannel events;
  RunnerArgs args;
  if (!parse_args(argc, argv, args, events)) return usage();
  const int event_fd = args.event_fd, watch_fd = args.watch_fd;
  const std::string& spec_text = args.spec_text;
  events.open(event_fd);
  // The pipe whose closing kills our process group (gilhost set it up: run/child.cpp), moved high up (the
  // kernel's set-up is the open file's, so it moves with it); programs the case execs do not hold it.
  if (watch_fd >= 0) {
    gilhost::set_cloexec(watch_fd);
    if (dup_high(watch_fd) != watch_fd) ::close(watch_fd);
  }

  gilhost::RunnerSpec spec;
  try {
    spec = gilhost::RunnerSpec::from_text(spec_text);
  } catch (const std::exception& e) {
    fail(events, Stage::spec, e.what());
  }

  std::string error;
  const std::int64_t load_start = gilhost::monotonic_ns();
  // Kept open until exit (declared before the interpreter, so it outlives it): CPython cannot be unloaded.
  gilhost::py::SharedLibrary lib = gilhost::py::SharedLibrary::open_global(spec.libpython, error);
  if (!lib.valid()) fail(events, Stage::load, error);
  gilhost::py::Api api;
  if (!api.load(lib, error)) fail(events, Stage::load, error);
  if (spec.subinterpreters > 0 && !api.has_subinterpreters())
    fail(events, Stage::load, "this libpython has no Py_NewInterpreterFromConfig (subinterpreters need 3.12+)");

  const std::int64_t t0 = gilhost::monotonic_ns();
  const std::int64_t load_ns = t0 - load_start;
  gilhost::ScopedInterpreter python(api, spec.executable);
  if (!python.ok()) fail(events, Stage::init, python.error());
  Startup startup;
  startup.init_ns = gilhost::monotonic_ns() - t0;
  events.send(gilhost::protocol::ReadyEvent{own_pid(), startup.init_ns, main_at, load_ns});
  bool gil_off_at_start = false;
  if (spec.locate_gil) {
    const gilhost::protocol::GilEvent gil = gilhost::locate_main_gil(api, spec.bootstrap_cache_dir, spec.libpython, spec.gil_offsets);
    gil_off_at_start = !gil.has_gil;
    events.send(gil);
  }

  int exit_code = 0;
  // Kept, mapped, until the process exits (std::exit runs no destructor of main's): unmapping the cache
  // file after the case cost 150-240 us a run on a 2-CPU VM (a TLB shootdown is an IPI to the other CPU,
  // slow under nested virtualisation); the exit frees the whole address space at once.
  const gilhost::BootstrapCode code = gilhost::BootstrapCode::prepare(api, spec.bootstrap_cache_dir);
  {
    startup.bootstrap_ns = code.prepare_ns();
    startup.bootstrap_cached = code.from_cache();
    if (spec.subinterpreters > 0) {
      std::vector<gilhost::protocol::GilEvent> gils;
      gilhost::protocol::CaseEvent event = gilhost::run_in_subinterpreters(api, spec, code, gils);
      for (const auto& gil : gils) events.send(gil);
      startup.stamp(event);
      exit_code = static_cast<int>(event.outcome.exit_code);
      events.send(event);
    } else {
      exit_code = run_in_main(api, spec, code, events, startup, gil_off_at_start);
    }
  }

  const std::int64_t f0 = gilhost::monotonic_ns();
  const int finalize_status = python.finalize();
  const gilhost::CpuUsage usage = gilhost::CpuUsage::now();
  const std::int64_t f1 = gilhost::monotonic_ns();  // from here to the reap: the exit (results-format.md)
  events.send(gilhost::protocol::FinalizedEvent{f1 - f0, usage.max_rss_kb, finalize_status, f1});
  std::fflush(nullptr);
  // Like `python`: 120 when flushing the standard streams failed at exit.
  std::exit(finalize_status < 0 && exit_code == 0 ? 120 : exit_code);
}
