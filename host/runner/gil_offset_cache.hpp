#pragma once
// Where one build's main-interpreter GIL lives, kept on disk between runs.
//
// Locating the GIL (runner/gil_locator) starts a thread, watches it block and joins it: a fixed cost in
// every run. The main interpreter's GIL is static data of libpython, so in every process that loads the
// same file it sits at the same offset from the file's load address. A cache file holds that offset,
// keyed by the file's identity (real path, device, inode, size, mtime) and the C library's version (the
// futex word inside the condition variable is glibc's layout), so a rebuilt or replaced libpython never
// reads it. A hit is still checked in each run before it is used (runner/gil_locator): the word the
// locating thread's state pointer was seen at (the GIL's last holder) must hold the current thread state,
// and the offsets must fall in a writable segment of the file's image. A miss or a failed check is a
// full locate, whose result is written back.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gilhost {

// What a full locate found, as offsets: enough to rebuild the event without a helper thread.
struct GilOffset {
  bool has_gil = true;  // false: a free-threaded build with its GIL off (checked with sys._is_gil_enabled)
  // From the file's load address, the futex word a GIL waiter slept on (has_gil).
  std::uint64_t word_offset = 0;
  // From the futex word, the pointer-sized word that held the locating thread's state (the GIL's last
  // holder, while that thread held it): what a run checks before trusting the offset (has_gil).
  std::int64_t holder_delta = 0;
  // The file the offsets are from, its real path (what the run's gil event names): kept in the cache, so
  // that a run that finds its offset there resolves no path.
  std::string object;
  bool operator==(const GilOffset& o) const {
    return has_gil == o.has_gil && word_offset == o.word_offset && holder_delta == o.holder_delta &&
           object == o.object;
  }
};

// The identity (`key`) of the file at `path` after symlinks: its device, inode, size and mtime in ns, and
// the C library's version; nullopt when it cannot be stat'ed. One stat: no path is resolved (realpath
// reads a link per component, 20-30 us a run), and a link to the file has the file's identity.
struct LibraryIdentity {
  std::string key;
  dev_t dev = 0;
  ino_t ino = 0;
};
std::optional<LibraryIdentity> library_identity(const std::string& path);
// Whether `path` names the file `id` is of (one stat): a cached object path still does after a run found
// it in the cache, unless the library was moved or renamed since (the same inode, the same key).
bool names_file(const std::string& path, const LibraryIdentity& id);
// Whether a cached offset's object is the library loaded from `libpython` (identity `id`): by the name
// given, or by its real path still naming that file (one stat).
bool offset_names_library(const GilOffset& offset, const std::string& libpython, const LibraryIdentity& id);
// `path` with every link resolved, or "" when it cannot be (the full locate's check that the GIL it found
// is in this library, runner/gil_locator).
std::string real_path_of(const std::string& path);
// The cache's key: the identity and, where the build can say (sys._is_gil_enabled, 3.13+), whether the
// GIL is on: a free-threaded build with its GIL forced on keeps an entry of its own.
std::string gil_offset_key(const LibraryIdentity& id, std::optional<bool> gil_on);

// `dir`/gil-<hash of identity>.offset
std::string gil_offset_cache_path(const std::string& dir, const std::string& identity);
// Text: a magic line, the identity, "object PATH", "gil WORD_OFFSET HOLDER_DELTA" or "nogil", then a
// checksum line. An object path with a newline is never written (write_gil_offset).
std::string encode_gil_offset(const std::string& identity, const GilOffset& offset);
// The offset, if `file` is a whole, intact cache file for this identity.
std::optional<GilOffset> decode_gil_offset(const std::string& file, const std::string& identity);

// Never throw: a cache that cannot be read or written is only a slower run.
std::optional<GilOffset> read_gil_offset(const std::string& path, const std::string& identity);
bool write_gil_offset(const std::string& path, const std::string& identity, const GilOffset& offset);

// A build's offset as the orchestrator hands it to each run of a cell (RunnerSpec::gil_offsets): read from
// the cache for the file's identity, and its object checked to name the file, once per cell; so a run
// stats, opens, reads and decodes nothing for it (~0.07 ms a run on a slow VM). The run still checks it
// in its own process (the holder word, the writable segment) before it trusts it, as any cached offset.
struct HandedGilOffset {
  std::optional<bool> gil_on;  // what its key said: nullopt for a build that cannot say (before 3.13)
  GilOffset offset;
  bool operator==(const HandedGilOffset& o) const { return gil_on == o.gil_on && offset == o.offset; }
};
// The offsets cached in `dir` for `libpython` with the GIL on, off, or not said (at most three).
std::vector<HandedGilOffset> handed_gil_offsets(const std::string& dir, const std::string& libpython);

// Where the object (the program or a shared library) holding `address` begins in memory, as dladdr's
// dli_fbase says it; 0 when no loaded object holds it. From the program headers (dl_iterate_phdr): dladdr
// also scans the object's symbol table for the nearest symbol, 15-18 us a run for libpython's.
std::uintptr_t object_base_of(const void* address);

// Whether [base + offset, base + offset + size) lies in one writable loaded segment of the object loaded
// at `base` (dl_iterate_phdr): where a cached offset may be read without a fault.
bool in_writable_segment(std::uintptr_t base, std::uint64_t offset, std::uint64_t size);

}  // namespace gilhost
