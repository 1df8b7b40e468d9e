#pragma once
// A private file's bytes, mapped read-only rather than read into a string: what every run of the runner
// reads before its case (the compiled bootstrap, the GIL's offset) costs it page faults, not system calls,
// and here a fresh anonymous page costs ~10 us (zeroed, then copied into, on a nested VM) where the page
// cache's pages come mapped in one fault for the whole file (docs/performance.md, "Page faults").
//
// Only for the caches gilhost writes atomically (write beside, then rename): the mapped file is then never
// truncated under us, which would turn a read of the map into SIGBUS.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gilhost {

class MappedFile {
 public:
  // `path` mapped when it is a regular file of this user's, in a folder of this user's, that no one else
  // may write (util/paths, read_private_file); nullopt otherwise, or when it cannot be mapped.
  static std::optional<MappedFile> open_private(const std::string& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  ~MappedFile();

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedFile(void* data, std::size_t size) : data_(data), size_(size) {}
  void* data_ = nullptr;  // null for an empty file (nothing to map)
  std::size_t size_ = 0;
};

}  // namespace gilhost
