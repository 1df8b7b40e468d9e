#pragma once
// Every file gilhost replaces whole (a report's -o, `merge`'s output, caches) is written here: into a
// temporary that mkstemp makes in the destination's own folder (O_CREAT|O_EXCL, so a symlink or file
// planted at a guessable name is never followed or reused), fsynced, then renamed over the destination
// in one step (readers see the old file or the new one, never half). Any failure (ENOSPC, EIO, a throw
// from whoever streams into it) removes the temporary. A temporary's name holds its writer's pid
// (.NAME.tmp.PID.XXXXXX): one left by a writer killed with SIGKILL is removed by the next AtomicFile of
// the same destination (remove_stale_temporaries).
#include <string>
#include <memory>
#include <string_view>

#include "util/fd.hpp"

namespace gilhost {

// Removes the temporaries an earlier writer of `path` left behind (killed with SIGKILL, or the machine
// went down): regular files of this user named .NAME.tmp.PID.XXXXXX whose PID is no live process, and
// older ones named .NAME.tmp.XXXXXX (no pid) last written more than `max_age_s` ago. Nothing else in the
// folder is touched. Returns how many it removed.
int remove_stale_temporaries(const std::string& path, long max_age_s = 600);

class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);  // throws std::system_error naming the folder
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // not committed: the temporary is removed
  // Buffered; throws std::system_error (ENOSPC...) naming the destination.
  void write(std::string_view data);
  // Flushes, fsyncs and renames over the destination; throws on failure (the temporary is removed).
  void commit();
  std::size_t bytes_written() const { return written_; }
  const std::string& temporary() const { return tmp_; }

 private:
  void flush();
  [[noreturn]] void fail(int err, const std::string& what);
  std::string path_, tmp_;
  UniqueFd fd_;
  std::string buffer_;
  std::size_t written_ = 0;
  bool committed_ = false;
};

// Where a document goes: stdout ("" or "-"), a device or FIFO the user named (/dev/null, /dev/stdout:
// written in place, since a rename would replace the device with a file), or a regular file (AtomicFile).
class OutputSink {
 public:
  explicit OutputSink(const std::string& path);
  OutputSink(const OutputSink&) = delete;
  OutputSink& operator=(const OutputSink&) = delete;
  void write(std::string_view data);
  void finish();  // commits; throws on failure
  std::size_t bytes_written() const { return written_; }

 private:
  std::string path_;
  std::unique_ptr<AtomicFile> file_;
  UniqueFd device_;  // in-place target; -1 with no file_: stdout
  std::size_t written_ = 0;
};

}  // namespace gilhost
