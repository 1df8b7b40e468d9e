#pragma once
// FNV-1a, 64 bits: a cache key and a corruption check, not a cryptographic hash.
#include <cstdint>
#include <string>
#include <string_view>

namespace gilhost {

constexpr std::uint64_t kFnv1a64Offset = 0xcbf29ce484222325ULL;

// constexpr, so the key of a text compiled into the program costs nothing when it runs.
constexpr std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed = kFnv1a64Offset) {
  std::uint64_t h = seed;
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// FNV-1a's step over eight bytes at a time (the tail byte by byte): a corruption check for data read on
// every run (the runner's bootstrap cache), several times faster than fnv1a64; not the same value.
std::uint64_t fnv1a64_words(std::string_view data);

// 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

}  // namespace gilhost
