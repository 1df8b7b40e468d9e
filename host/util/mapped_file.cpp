#include "util/mapped_file.hpp"

#include <sys/mman.h>

#include <utility>

#include "util/fd.hpp"
#include "util/private_files.hpp"

namespace gilhost {

std::optional<MappedFile> MappedFile::open_private(const std::string& path) {
  std::size_t size = 0;
  const UniqueFd fd = open_private_file(path, size);
  if (!fd) return std::nullopt;
  if (size == 0) return MappedFile(nullptr, 0);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (data == MAP_FAILED) return std::nullopt;
  return MappedFile(data, size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace gilhost
