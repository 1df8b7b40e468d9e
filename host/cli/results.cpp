// report, compare, merge, export: results files in, documents out.
#include <filesystem>
#include <functional>
#include <iostream>
#include <variant>

#include "cli/commands.hpp"
#include "report/export.hpp"
#include "report/fit.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/model.hpp"
#include "report/sessions.hpp"
#include "report/table.hpp"
#include "report/text.hpp"
#include "report/trace.hpp"
#include "results/record_json.hpp"
#include "results/results_file.hpp"
#include "util/atomic_file.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

using Writer = std::function<void(std::string_view)>;

// Writes a document to -o FILE (util/atomic_file: readers never see half of it, and a failed write leaves
// no temporary) or to stdout, `produce` handing it over a piece at a time; false, said, on failure.
bool emit_streamed(const std::string& output, const std::function<void(const Writer&)>& produce) {
  try {
    if (output.empty() || output == "-") {
      produce([](std::string_view text) { std::cout << text; });
      std::cout << std::flush;
      return true;
    }
    const fs::path parent = fs::path(output).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    OutputSink sink(output);
    produce([&](std::string_view text) { sink.write(text); });
    sink.finish();
    std::cerr << "gilhost: wrote " << output << " (" << format_bytes(static_cast<double>(sink.bytes_written())) << ")\n";
    return true;
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return false;
  }
}

bool emit(const std::string& text, const std::string& output) {
  return emit_streamed(output, [&](const Writer& out) { out(text); });
}

// The session --session picks (0: all), saying so when several are pooled. Throws std::invalid_argument.
MergedResults read_sessions(const std::vector<std::string>& files, int session, const ReadOptions& read = {}) {
  MergedResults merged = keep_session(merge_files(files, {}, read), session);
  if (merged.duplicate_lines)
    std::cerr << "gilhost: " << merged.duplicate_lines << " lines read before (the same session and index) counted once\n";
  for (const auto& why : merged.impossible) std::cerr << "gilhost: " << why << "\n";
  if (const auto sessions = list_sessions(merged); session == 0 && sessions.size() > 1)
    std::cerr << "gilhost: " << join(files, ", ") << ": " << several_sessions_note(sessions) << "\n";
  return merged;
}

}  // namespace

int cmd_report(const ReportOptionsCli& o) {
  MergedResults merged;
  try {
    // A trace, CSV or HTML page needs no timelines in memory: the trace and the page's lanes read each
    // run's again as they write it.
    ReadOptions read;
    read.timelines = o.format != "trace" && o.format != "csv" && o.format != "html";
    merged = read_sessions(o.files, o.session, read);
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  ReportOptions ro;
  ro.baseline_python = o.baseline_python;
  ro.details = !o.no_details;
  ReportModel model;
  try {
    model = build_report_model(merged, ro);
  } catch (const std::invalid_argument& e) {
    std::cerr << "gilhost: --baseline-python: " << e.what() << "\n";
    return 2;
  }
  const bool written = emit_streamed(o.output, [&](const Writer& out) {
    if (o.format == "text") out(render_text(model, {o.wide || !o.output.empty() ? 0 : output_width(0), o.files.size() == 1 ? o.files[0] : ""}));
    else if (o.format == "md") out(render_markdown(model));
    else if (o.format == "html") write_html(model, out);
    else if (o.format == "json") out(summary_json(model).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    else if (o.format == "trace") write_chrome_trace(model, out);
    else write_runs_csv(model, out);
  });
  if (!written) return 2;
  if (model.malformed_lines) std::cerr << "gilhost: " << model.malformed_lines << " malformed lines skipped\n";
  if (model.sections.empty()) std::cerr << "gilhost: no records in " << join(o.files, ", ") << "\n";
  if (o.format == "trace" && !model.sections.empty() && traced_runs(model) == 0)
    std::cerr << "gilhost: no run in " << join(o.files, ", ") << " has thread states: the trace is empty\n";
  if (o.format != "text")  // the text report prints its notes itself
    for (const auto& s : model.sections)
      for (const auto& n : s.notes) std::cerr << "gilhost: " << n << "\n";
  return 0;
}

int cmd_compare(const CompareOptionsCli& o) {
  MergedResults a, b;
  try {
    a = read_sessions({o.a}, o.session);
    b = read_sessions({o.b}, o.session);
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  Comparison c;
  try {
    c = compare_runs(a.lines, b.lines, o.options);
  } catch (const std::invalid_argument& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  c.path_a = o.a;
  c.path_b = o.b;
  // As report and merge do: a line left out is said, never dropped without a word.
  for (const auto* side : {&a, &b})
    if (side->malformed_lines)
      std::cerr << "gilhost: " << side->sources.front() << ": " << side->malformed_lines << " malformed lines skipped\n";
  const bool written = o.format == "json" ? emit(comparison_json(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", o.output)
                       : o.format == "md" ? emit(render_comparison_markdown(c), o.output)
                                          : emit(render_comparison_text(c), o.output);
  if (!written) return 2;
  if (c.rows.empty()) {
    std::cerr << "gilhost: no cell of " << o.a << " matches one of " << o.b
              << (o.options.by == "label" ? " (labels differ? try --by python or --by minor)" : "") << "\n";
    return 2;
  }
  if (o.format != "text" && c.different_sessions())  // the text prints its note itself
    std::cerr << "gilhost: note: " << comparison_session_note(c) << "\n";
  return o.fail_on_change ? fail_on_change_status(c) : 0;
}

int cmd_merge(const std::string& out, const std::vector<std::string>& inputs, const MergeOptions& mo, bool force) {
  std::error_code ec;
  if (fs::exists(out, ec) && !force) {
    std::cerr << "gilhost: " << out << " exists; give --force to replace it (gilhost merge OUT IN...: the first file is the output)\n";
    return 2;
  }
  MergedResults merged;
  try {
    merged = merge_files(inputs, mo);
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
  int metas = 0, runs = 0, skips = 0;
  for (const auto& line : merged.lines) {
    metas += std::holds_alternative<MetaRecord>(line);
    runs += std::holds_alternative<RunRecord>(line);
    skips += std::holds_alternative<SkipRecord>(line);
  }
  const bool written = emit_streamed(out, [&](const Writer& put) {
    for (const auto& line : merged.lines) put(to_jsonl_line(line));
  });
  if (!written) return 2;
  std::cerr << "gilhost: merged " << inputs.size() << " files (" << metas << " sessions, " << runs << " runs, " << skips
            << " skips) into " << out << "\n";
  if (!merged.relabeled.empty()) std::cerr << "  labels tagged with their host: " << join(merged.relabeled, ", ") << "\n";
  if (merged.malformed_lines) std::cerr << "  " << merged.malformed_lines << " malformed lines skipped\n";
  if (merged.duplicate_lines) std::cerr << "  " << merged.duplicate_lines << " lines read before (the same session and index) kept once\n";
  for (const auto& why : merged.impossible) std::cerr << "  " << why << "\n";
  return 0;
}

}  // namespace gilhost
