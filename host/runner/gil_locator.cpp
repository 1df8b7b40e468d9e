#include "runner/gil_locator.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "runner/gil_offset_cache.hpp"
#include "util/clock.hpp"
#include "python/value.hpp"
#include "util/fd.hpp"

namespace gilhost {

namespace {

// A helper not seen waiting by then: not located. Seen within a millisecond on a quiet machine; at a load
// of 20 on 2 cores the helper was not scheduled within 200 ms.
constexpr std::int64_t kPatienceNs = 1000000000;

// The futex word `tid` is blocked on, or 0 when it is not in a futex wait.
std::uint64_t futex_wait_of(int fd) {
  char buf[256];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = 0;
  char* end = nullptr;
  const long nr = std::strtol(buf, &end, 10);
  if (end == buf || nr != SYS_futex) return 0;
  const std::uint64_t word = std::strtoull(end, &end, 16);
  const std::uint64_t op = std::strtoull(end, nullptr, 16) & FUTEX_CMD_MASK;
  return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET ? word : 0;
}

// The file whose loaded image holds `address` (libpython, or the program Python is linked into), and the
// address's offset from its load address: where other processes that load the same file have it.
void note_object(std::uint64_t address, protocol::GilEvent& event) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(address), &info) == 0 || !info.dli_fname || !info.dli_fbase) return;
  char real[PATH_MAX];
  if (!::realpath(info.dli_fname, real)) return;
  event.object = real;
  if (event.futex_hi > event.futex_lo) event.object_offset = event.futex_lo - reinterpret_cast<std::uint64_t>(info.dli_fbase);
}

void pause_briefly() {
  const timespec ts{0, 50000};
  ::nanosleep(&ts, nullptr);
}

}  // namespace

protocol::GilEvent locate_gil(const py::Api& api, std::int64_t interpreter) {
  protocol::GilEvent event;
  event.interpreter = interpreter;
  event.has_gil = true;
  if (!api.has_thread_states()) {
    event.note = "this libpython lacks PyThreadState_New or PyThreadState_DeleteCurrent";
    return event;
  }
  py::PyInterpreterState* interp = api.PyInterpreterState_Get();
  std::atomic<pid_t> helper_tid{0};
  std::atomic<bool> took_it{false};
  std::thread helper([&] {
    helper_tid = static_cast<pid_t>(::syscall(SYS_gettid));
    py::PyThreadState* state = api.PyThreadState_New(interp);
    api.PyEval_RestoreThread(state);  // blocks while we hold the GIL, if there is one
    took_it = true;
    api.PyThreadState_Clear(state);
    api.PyThreadState_DeleteCurrent();
  });
  while (helper_tid == 0) std::this_thread::yield();
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/syscall", static_cast<int>(helper_tid.load()));
  UniqueFd syscall_file(::open(path, O_RDONLY | O_CLOEXEC));
  std::uint64_t word = 0;
  const std::int64_t deadline = monotonic_ns() + kPatienceNs;
  while (syscall_file && !took_it && monotonic_ns() < deadline) {
    if ((word = futex_wait_of(syscall_file.get())) != 0) break;
    pause_briefly();
  }
  const bool without_waiting = took_it.load();
  event.helper_tid = helper_tid.load();
  {
    py::GilRelease released(api);  // let the helper through, then take the GIL back
    helper.join();
  }
  if (without_waiting) {
    event.has_gil = false;
    // Which libpython has none: other processes that load it (the same build) have none either.
    note_object(reinterpret_cast<std::uintptr_t>(api.PyInterpreterState_Get), event);
  } else if (word != 0) {
    event.futex_lo = word - kGilWindowBelow;
    event.futex_hi = word + kGilWindowAbove;
    note_object(word, event);
  } else {
    event.note = syscall_file ? "a thread waiting for it was not seen in a futex wait within 1 s"
                              : "cannot read /proc/self/task/TID/syscall";
  }
  return event;
}

namespace {

std::uintptr_t word_at(std::uintptr_t address) {
  std::uintptr_t value = 0;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof value);
  return value;
}

// sys._is_gil_enabled() now, called through the C API (nothing compiled); nullopt where there is no
// such function (before 3.13: there is always a GIL).
std::optional<bool> gil_enabled_sys(const py::Api& api) {
  py::Ref sys(api, api.PyImport_ImportModule("sys"));
  py::Ref fn(api, sys ? api.PyObject_GetAttrString(sys.get(), "_is_gil_enabled") : nullptr);
  py::Ref on(api, fn ? api.PyObject_CallObject(fn.get(), nullptr) : nullptr);
  std::optional<bool> out;
  if (on) out = api.PyLong_AsLong(on.get()) != 0;
  api.PyErr_Clear();
  return out;
}

// Whether a cached offset holds in this process: the GIL is off as it was; or it is on, and the word
// the last holder's state was seen at holds this thread's state (it holds the GIL, and took it last).
// A free-threaded build's GIL forced on (PYTHON_GIL=1) has its own entry: the key says the GIL's state.
bool cached_offset_holds(const py::Api& api, std::uintptr_t base, const GilOffset& o, std::optional<bool> on) {
  if (!o.has_gil) return on == false;
  if (on == false) return false;
  const std::uint64_t holder = o.word_offset + static_cast<std::uint64_t>(o.holder_delta);
  if (holder % sizeof(std::uintptr_t) != 0 || !in_writable_segment(base, o.word_offset, 4) ||
      !in_writable_segment(base, holder, sizeof(std::uintptr_t)))
    return false;
  return word_at(base + holder) == reinterpret_cast<std::uintptr_t>(api.PyThreadState_Get());
}

protocol::GilEvent event_from_cache(std::uintptr_t base, const std::string& object, const GilOffset& o) {
  protocol::GilEvent event;
  event.interpreter = 0;
  event.has_gil = o.has_gil;
  event.object = object;
  event.from_cache = true;
  if (o.has_gil) {
    const std::uint64_t word = base + o.word_offset;
    event.futex_lo = word - kGilWindowBelow;
    event.futex_hi = word + kGilWindowAbove;
    event.object_offset = event.futex_lo - base;
  }
  return event;
}

// What a full locate found, as offsets a later run can check; nullopt when it cannot be checked (no
// window in `object`, or no word of the window holds this thread's state).
std::optional<GilOffset> offset_of(const py::Api& api, const protocol::GilEvent& event, const std::string& object) {
  GilOffset out;
  if (object.empty() || event.object != object || !event.note.empty()) return std::nullopt;
  out.object = object;
  if (!event.has_gil) {
    out.has_gil = false;
    return out;
  }
  if (event.futex_hi <= event.futex_lo) return std::nullopt;
  const std::uint64_t base = event.futex_lo - event.object_offset;
  const std::uint64_t word = event.futex_lo + kGilWindowBelow;
  const auto state = reinterpret_cast<std::uintptr_t>(api.PyThreadState_Get());
  std::optional<std::uint64_t> best;
  const std::uint64_t step = sizeof(std::uintptr_t);
  for (std::uint64_t at = (event.futex_lo + step - 1) / step * step; at + step <= event.futex_hi; at += step) {
    if (!in_writable_segment(base, at - base, step) || word_at(at) != state) continue;
    const auto distance = [&](std::uint64_t a) { return a > word ? a - word : word - a; };
    if (!best || distance(at) < distance(*best)) best = at;
  }
  if (!best) return std::nullopt;
  out.word_offset = word - base;
  out.holder_delta = static_cast<std::int64_t>(*best - word);
  return out;
}

// The event of a cached offset that held, with the time its check took.
protocol::GilEvent cached_event(std::uintptr_t base, const GilOffset& o, std::int64_t t0) {
  protocol::GilEvent event = event_from_cache(base, o.object, o);
  event.locate_ns = monotonic_ns() - t0;
  return event;
}

}  // namespace

protocol::GilEvent locate_main_gil(const py::Api& api, const std::string& cache_dir, const std::string& libpython,
                                   const std::vector<HandedGilOffset>& handed) {
  const std::int64_t t0 = monotonic_ns();
  const std::uintptr_t base = object_base_of(reinterpret_cast<const void*>(api.PyInterpreterState_Get));
  const bool can_check = base != 0 && api.PyThreadState_Get && api.PyImport_ImportModule;
  const std::optional<bool> on = can_check ? gil_enabled_sys(api) : std::nullopt;
  if (can_check)
    for (const HandedGilOffset& h : handed)
      if (h.gil_on == on && cached_offset_holds(api, base, h.offset, on)) return cached_event(base, h.offset, t0);
  // None handed, or a stale one (a run since located again and wrote the file): the file's.
  const std::optional<LibraryIdentity> id = cache_dir.empty() || !can_check ? std::nullopt : library_identity(libpython);
  std::string path, key;
  if (id) {
    key = gil_offset_key(*id, on);
    path = gil_offset_cache_path(cache_dir, key);
    const std::optional<GilOffset> cached = read_gil_offset(path, key);
    if (cached && offset_names_library(*cached, libpython, *id) && cached_offset_holds(api, base, *cached, on))
      return cached_event(base, *cached, t0);
  }
  protocol::GilEvent event = locate_gil(api, 0);
  if (!path.empty())
    if (const auto found = offset_of(api, event, real_path_of(libpython))) write_gil_offset(path, key, *found);
  event.locate_ns = monotonic_ns() - t0;
  return event;
}

namespace {

std::atomic<bool> other_interpreter_heard{false};
std::atomic<bool> interpreters_watched{false};
const py::Api* watched_api = nullptr;

// A runtime-wide hook, called at every audited event of every interpreter (imports, opens, sleeps...).
// An interpreter is made with no thread state attached (_PyXI_NewInterpreter swaps it out), so its own
// "cpython.PyInterpreterState_New" goes unheard; its first import, as it starts, is heard, in it: any
// event from an interpreter other than the main one (`main`) says the script made one.
int count_interpreters(const char*, py::PyObject*, void* main) {
  if (watched_api->PyInterpreterState_Get() != main) other_interpreter_heard.store(true, std::memory_order_relaxed);
  return 0;
}

// The fallback: the modules every way of making interpreters from Python goes through (3.12-3.13,
// 3.14), looked up in sys.modules. Loose: 3.14's concurrent.futures imports _interpreters to see
// whether it can offer InterpreterPoolExecutor, and a ThreadPoolExecutor then reads as interpreters.
bool interpreter_modules_loaded(const py::Api& api) {
  py::Ref sys(api, api.PyImport_ImportModule("sys"));
  py::Ref modules(api, sys ? api.PyObject_GetAttrString(sys.get(), "modules") : nullptr);
  if (!modules) {
    api.PyErr_Clear();
    return false;
  }
  bool used = false;
  for (const char* name : {"_interpreters", "_xxsubinterpreters"})
    used = used || api.PyDict_GetItemString(modules.get(), name) != nullptr;  // borrowed; never raises
  return used;
}

}  // namespace

void watch_script_interpreters(const py::Api& api) {
  if (!api.PySys_AddAuditHook || !api.PyInterpreterState_Get || interpreters_watched) return;
  watched_api = &api;
  if (api.PySys_AddAuditHook(count_interpreters, api.PyInterpreterState_Get()) == 0) interpreters_watched = true;
  else api.PyErr_Clear();
}

std::optional<protocol::GilEvent> script_interpreters(const py::Api& api) {
  const bool made = interpreters_watched ? other_interpreter_heard.load() : interpreter_modules_loaded(api);
  if (!made) return std::nullopt;
  protocol::GilEvent event;
  event.interpreter = kScriptInterpreters;
  event.has_gil = true;
  event.after_case = true;
  event.note = "the script's own subinterpreters: their GILs are not located";
  return event;
}

}  // namespace gilhost
