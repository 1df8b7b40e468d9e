// libFuzzer target: util/json_reader, the runner's spec reader, against nlohmann on any bytes. Both refuse
// the text, or both read the same value (equal, and written alike, so each number keeps its kind); text
// nested deeper than kMaxJsonDepth, which nlohmann reads, is refused. Never a crash or a sanitizer report.
//
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DGILHOST_FUZZ=ON
//   cmake --build build-fuzz --target gilhost_fuzz_json_reader
//   build-fuzz/tests/fuzz/gilhost_fuzz_json_reader -max_total_time=30 /tmp/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "util/json_depth.hpp"
#include "util/json_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // nlohmann ends its input at a NUL byte ("6\0x" reads as 6), where the reader refuses what follows: both
  // read the bytes before the first NUL (the runner's spec, an argv word, holds none).
  text = text.substr(0, text.find('\0'));
  std::string error;
  const auto mine = gilhost::read_json(text, error);
  if (gilhost::json_nested_deeper_than(text)) {
    if (mine) std::abort();
    return 0;
  }
  const nlohmann::json theirs = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (mine.has_value() == theirs.is_discarded()) std::abort();
  if (!mine) {
    if (error.empty()) std::abort();
    return 0;
  }
  const nlohmann::json converted = gilhost::to_nlohmann(*mine);
  if (converted != theirs || converted.dump() != theirs.dump()) std::abort();
  return 0;
}
