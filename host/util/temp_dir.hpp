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

  const std::string& path() const { return path_; }

 private:
  void remove() noexcept;
  std::string path_;
};

}  // namespace gilhost
