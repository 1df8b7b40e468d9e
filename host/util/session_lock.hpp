#pragma once
// One measuring session per machine. Two gilhost sessions measuring at once share the cores and spoil
// each other's figures, so `gilhost run` holds an exclusive flock on a file in the cache folder for the
// whole session; a second one waits, and is told for whom. The kernel drops the lock when its holder
// dies, however it dies, so nothing stale is ever left to clean up.
#include <functional>
#include <string>

#include "util/fd.hpp"

namespace gilhost {

class SessionLock {
 public:
  // Takes the lock at `path` (creating the file and its folder). While another session holds it,
  // `on_wait` is called once with what that session wrote (its pid, command and start), then this
  // waits. Once taken, `holder` (what this session is) is written for the next one to read.
  // Throws std::system_error when the file cannot be opened or locked.
  static SessionLock acquire(const std::string& path, const std::string& holder,
                             const std::function<void(const std::string& other)>& on_wait);
  // Takes the lock only if it is free now; an invalid lock (valid() false) otherwise.
  static SessionLock try_acquire(const std::string& path, const std::string& holder);

  SessionLock() = default;  // holds nothing
  bool valid() const { return fd_.valid(); }

 private:
  explicit SessionLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing it releases the lock
};

// cache_dir()/session.lock
std::string default_session_lock_path();

}  // namespace gilhost
