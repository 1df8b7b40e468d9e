// libFuzzer target for the results reader and everything after it: any bytes as a results file are
// either refused (std::runtime_error "FILE:LINE: why" or "FILE: no gilhost record in it") or read, and
// then report (text, Markdown, HTML, JSON, CSV), compare (the file against itself) and merge (written back
// and read again) run on them; never a crash, a sanitizer report, unbounded recursion, or another
// exception.
//
//   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DGILHOST_FUZZ=ON
//   cmake --build build-fuzz --target gilhost_fuzz_results
//   build-fuzz/tests/fuzz/gilhost_fuzz_results -max_total_time=30 /tmp/corpus tests/fuzz/results_corpus
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "report/compare.hpp"
#include "report/export.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/merge.hpp"
#include "report/model.hpp"
#include "report/text.hpp"
#include "results/results_file.hpp"

namespace {

const std::string kPath = "fuzz.jsonl";

// A refusal names the file, as a user sees it.
void check_refusal(const std::runtime_error& e) {
  if (std::string(e.what()).rfind(kPath + ":", 0) != 0) std::abort();
}

void report_everything(const gilhost::MergedResults& merged) {
  for (const bool details : {true, false}) {
    gilhost::ReportOptions options;
    options.details = details;
    const gilhost::ReportModel model = gilhost::build_report_model(merged, options);
    (void)gilhost::render_text(model);
    (void)gilhost::render_markdown(model);
    (void)gilhost::render_html(model);
    (void)gilhost::summary_json(model).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)gilhost::runs_csv(model);
  }
  const gilhost::Comparison c = gilhost::compare_runs(merged.lines, merged.lines, {});
  (void)gilhost::render_comparison_text(c);
  (void)gilhost::comparison_json(c).dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gilhost::LoadedResults loaded;
  try {
    loaded = gilhost::load_results_text(text, kPath);
  } catch (const std::runtime_error& e) {
    check_refusal(e);
    return 0;
  }
  const gilhost::MergedResults merged = gilhost::merge_results({loaded});
  report_everything(merged);
  // What merge writes reads back as the same records.
  const std::string written = gilhost::to_jsonl(merged.lines);
  try {
    const gilhost::LoadedResults again = gilhost::load_results_text(written, kPath);
    if (again.lines.size() != merged.lines.size() || again.malformed_lines != 0) std::abort();
  } catch (const std::runtime_error&) {
    std::abort();
  }
  return 0;
}
