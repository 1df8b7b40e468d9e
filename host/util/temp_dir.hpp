#pragma once
// A folder of our own (mkdtemp), removed with everything in it when the owner goes: an error, an
// exception or an interrupt that unwinds leaves nothing behind.
#include <string>

namespace gilhost {

class TempDir {
 public:
  // Creates parent (and its parents) and a fresh folder PARENT/PREFIX-XXXXXX in it; throws
  // std::system_error with the path.
  TempDir(const std::string& parent, const std::string& prefix);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  ~TempDir();

  // A TempDir named for this process, PARENT/PID-WHAT-XXXXXX, so that a later process can tell the
  // folders of live processes from those of dead ones.
  static TempDir owned(const std::string& parent, const std::string& what);
  // Removes the folders of `parent` that owned() made for processes no longer running: one killed with
  // SIGKILL (or by a power cut) had no chance to remove its own.
  static void remove_orphans(const std::string& parent);

  const std::string& path() const { return path_; }

 private:
  void remove() noexcept;
  std::string path_;
};

}  // namespace gilhost
