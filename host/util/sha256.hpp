#pragma once
// SHA-256 (FIPS 180-4): the checksum users compare with what a release page publishes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gilhost {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);
// Of a whole file, read in chunks; throws std::system_error with the path.
std::string sha256_file(const std::string& path);
// True for 64 hex digits (either case).
bool is_sha256_hex(std::string_view s);

}  // namespace gilhost
