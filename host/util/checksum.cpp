#include "util/checksum.hpp"

#include <cstdio>
#include <cstring>

namespace gilhost {

std::uint64_t fnv1a64_words(std::string_view data) {
  std::uint64_t h = kFnv1a64Offset;
  std::size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, data.data() + i, 8);
    h = (h ^ word) * 0x100000001b3ULL;
    h ^= h >> 29;  // a word's high bytes reach the low ones, as a byte's bits do in the byte-wise form
  }
  return fnv1a64(data.substr(i), h);
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace gilhost
