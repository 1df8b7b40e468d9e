#pragma once
// Where the GIL of the interpreter this thread is attached to lives, found by watching a thread wait for it.
//
// While this thread holds the GIL, a helper thread with a thread state of that interpreter tries to take
// it (PyEval_RestoreThread) and blocks; its /proc/self/task/TID/syscall then shows the futex word it sleeps
// on, a word of the GIL's condition variable (take_gil waits there, on every build 3.9-3.14). The window
// around that word covers the rest of the GIL's state, its mutex and its switch condition and mutex
// (struct _gil_runtime_state, under 220 bytes on every build): a thread seen waiting on a futex in it
// waits for this GIL. No CPython struct is read or assumed: the kernel shows where the wait is. A helper
// that takes the GIL without waiting says the interpreter has none (a free-threaded build, GIL off).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/events.hpp"
#include "python/capi.hpp"
#include "runner/gil_offset_cache.hpp"

namespace gilhost {

// Bytes of the window below and above the word a GIL waiter was seen on.
constexpr std::uint64_t kGilWindowBelow = 96, kGilWindowAbove = 160;

// `interpreter`: 0 for the main one, 1..N for the runner's subinterpreters. The calling thread must hold
// the interpreter's GIL (be attached to it); it holds it again on return.
protocol::GilEvent locate_gil(const py::Api& api, std::int64_t interpreter);

// The main interpreter's GIL before the case: from the per-build offset cache in `cache_dir`
// (runner/gil_offset_cache) when this run's check of it passes, else located as above and written back.
// `libpython`: the file the runner loaded. `handed`: the offsets the orchestrator read from that cache for
// this build (RunnerSpec::gil_offsets), checked before the disk is. An empty `cache_dir`: always located.
// The GIL must be held.
protocol::GilEvent locate_main_gil(const py::Api& api, const std::string& cache_dir, const std::string& libpython,
                                   const std::vector<HandedGilOffset>& handed = {});

// Before the case, in the main interpreter: from now on, an audit hook hears any other interpreter of
// this process act (its imports as it starts, at least). Without one (a libpython that lacks
// PySys_AddAuditHook), script_interpreters falls back to the modules the script loaded.
void watch_script_interpreters(const py::Api& api);
// After the case: whether the script made interpreters of its own (an InterpreterPoolExecutor, the
// interpreters module): their GILs, when they have their own, are not located. Then a report for
// interpreter kScriptInterpreters (no window) says so: the host marks the process's GIL waits unknown.
constexpr std::int64_t kScriptInterpreters = -1;
std::optional<protocol::GilEvent> script_interpreters(const py::Api& api);

}  // namespace gilhost
