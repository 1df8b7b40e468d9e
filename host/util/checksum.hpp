#pragma once
// FNV-1a, 64 bits: a cache key and a corruption check, not a cryptographic hash.
#include <cstdint>
#include <string>

namespace gilhost {

std::uint64_t fnv1a64(const std::string& data, std::uint64_t seed = 0xcbf29ce484222325ULL);
// 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

}  // namespace gilhost
