// libFuzzer target for the TOML experiment loader: any bytes either load (with every profile) or raise
// ConfigErrors whose messages are located in the file; never a crash, a sanitizer report, a hang, or
// another exception.
//
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DGILHOST_FUZZ=ON
//   cmake --build build-fuzz --target gilhost_fuzz_toml
//   build-fuzz/tests/fuzz/gilhost_fuzz_toml -max_total_time=60 -dict=tests/fuzz/toml.dict /tmp/corpus tests/fuzz/corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/loader.hpp"
#include "config/toml_guard.hpp"

namespace {

// Scripts named in the seeds ("../scripts/race.py") resolve, so valid inputs go past the script check.
const std::string& input_path() {
  static const std::string path = std::string(GILHOST_SOURCE_DIR) + "/configs/fuzz-input.toml";
  return path;
}

void check_errors(const gilhost::ConfigErrors& e) {
  if (e.errors().empty()) std::abort();
  for (const auto& err : e.errors())
    if (err.where.file != input_path() || err.message.empty() || err.where.line < 0 || err.where.column < 0)
      std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The stand-ins toml++ is shown come back as the file's own characters.
  const auto guarded = gilhost::guard_toml(text);
  if (!guarded.reserved && gilhost::restore_toml(guarded.text) != text) std::abort();
  gilhost::Experiment ex;
  try {
    ex = gilhost::load_experiment_text(text, input_path());
  } catch (const gilhost::ConfigErrors& e) {
    check_errors(e);
    return 0;
  }
  (void)ex.to_json().dump();  // what the results file's meta record holds
  for (const auto& profile : ex.profile_names) {
    try {
      (void)gilhost::load_experiment_text(text, input_path(), profile).to_json().dump();
    } catch (const gilhost::ConfigErrors& e) {
      check_errors(e);
    }
  }
  return 0;
}
