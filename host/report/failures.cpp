#include "report/failures.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "report/html.hpp"
#include "report/markdown.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string runs_text(const FailedCell& c) { return fmt::format("{} of {} runs failed", c.failed, c.runs); }

std::size_t longest_backtick_run(const std::string& text) {
  std::size_t longest = 0, run = 0;
  for (const char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::vector<std::string> last_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  for (const auto& line : split(text, '\n'))
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return lines;
}

std::string failure_cause(const RunRecord& r) {
  const double elapsed_s = static_cast<double>(r.parent_wall_ns) / 1e9;
  if (r.status == RunStatus::timeout) return fmt::format("timed out after {:.1f} s ({})", elapsed_s, r.note);
  if (r.status == RunStatus::crashed && r.signal != 0) {
    // The note says "killed by Killed[ after the case]" (the signal's description): said once here.
    std::string rest = r.note;
    const char* description = ::strsignal(r.signal);
    if (const std::string said = std::string("killed by ") + (description ? description : ""); starts_with(rest, said))
      rest = trim(rest.substr(said.size()));
    return fmt::format("killed by {} after {:.1f} s{}", signal_text(r.signal), elapsed_s, rest.empty() ? "" : " (" + rest + ")");
  }
  if (r.error) return r.error->type + (r.error->message.empty() ? "" : ": " + r.error->message);
  if (!r.note.empty()) return r.note;
  return fmt::format("exited with status {}", r.exit_code);
}

CellFailures collect_failures(const std::vector<RunRecord>& runs) {
  CellFailures out;
  std::map<std::pair<std::string, std::string>, std::size_t> at;  // cell -> index in out.failed
  for (const auto& r : runs) {
    // A cell that met its precision target did not stop short: not listed with those that did.
    if (!r.stopped.empty() && r.stopped.rfind("target:", 0) != 0) out.stopped.push_back({r.case_name, r.interpreter, r.stopped});
    if (r.warmup) continue;
    const auto key = std::make_pair(r.case_name, r.interpreter);
    auto it = at.find(key);
    if (it == at.end()) {
      it = at.emplace(key, out.failed.size()).first;
      out.failed.push_back({r.case_name, r.interpreter, 0, 0, "", {}, ""});
    }
    FailedCell& c = out.failed[it->second];
    ++c.runs;
    if (r.is_ok()) continue;
    ++c.failed;
    c.cause = failure_cause(r);
    c.traceback = last_lines(r.stderr_text, 6);
    c.stderr_file = r.stderr_file;
  }
  out.failed.erase(std::remove_if(out.failed.begin(), out.failed.end(), [](const FailedCell& c) { return c.failed == 0; }),
                   out.failed.end());
  return out;
}

std::string failures_text(const CellFailures& f) {
  std::string out;
  if (!f.failed.empty()) out += "\nfailed:\n";
  for (const auto& c : f.failed) {
    out += fmt::format("  ✗ {} @ {} ({}): {}\n", c.case_name, c.build, runs_text(c), c.cause);
    for (const auto& line : c.traceback) out += "      " + line + "\n";
    if (!c.stderr_file.empty()) out += "      full stderr: " + c.stderr_file + "\n";
  }
  if (!f.stopped.empty()) out += "\nstopped repeating:\n";
  for (const auto& s : f.stopped) out += "  " + s.case_name + " @ " + s.build + ": " + s.why + "\n";
  return out;
}

std::string markdown_code_span(const std::string& text) {
  const std::string body = escape_controls(text, true);
  const std::string fence(longest_backtick_run(body) + 1, '`');
  // Padded with spaces (stripped by the renderer) so a backtick at either end does not join the fence.
  return fence + " " + body + " " + fence;
}

std::string markdown_code_block(const std::vector<std::string>& lines, const std::string& indent) {
  std::string body;
  for (const auto& line : lines) body += indent + escape_controls(line, true) + "\n";
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  return indent + fence + "\n" + body + indent + fence + "\n";
}

std::string failures_markdown(const CellFailures& f) {
  std::string out;
  if (!f.failed.empty()) out += "### Failed\n\n";
  for (const auto& c : f.failed) {
    // Text from the script (its exception, its traceback) only ever inside code, which Markdown does not
    // read as HTML or emphasis; fenced longer than any backtick run in it, so nothing closes the code.
    out += fmt::format("- **{} @ {}** ({}): {}\n", markdown_escape(c.case_name), markdown_escape(c.build), runs_text(c),
                       markdown_code_span(c.cause));
    if (!c.traceback.empty()) out += "\n" + markdown_code_block(c.traceback, "  ");
    if (!c.stderr_file.empty()) out += "\n  full stderr: " + markdown_code_span(c.stderr_file) + "\n";
  }
  if (!f.stopped.empty()) out += "\n### Stopped repeating\n\n";
  for (const auto& s : f.stopped) out += "- " + markdown_escape(s.case_name + " @ " + s.build + ": " + s.why) + "\n";
  return out.empty() ? out : out + "\n";
}

std::string failures_html(const CellFailures& f) {
  std::string out;
  if (!f.failed.empty()) out += "<h3>Failed</h3>\n<ul class=\"failures\">\n";
  for (const auto& c : f.failed) {
    out += "<li><details><summary><b>" + html_escape(c.case_name + " @ " + c.build) + "</b> (" + runs_text(c) + "): " +
           html_escape(c.cause) + "</summary>\n<pre>" + html_escape(join(c.traceback, "\n")) + "</pre>\n";
    if (!c.stderr_file.empty()) out += "<p>full stderr: <code>" + html_escape(c.stderr_file) + "</code></p>\n";
    out += "</details></li>\n";
  }
  if (!f.failed.empty()) out += "</ul>\n";
  if (!f.stopped.empty()) out += "<h3>Stopped repeating</h3>\n<ul class=\"failures\">\n";
  for (const auto& s : f.stopped) out += "<li>" + html_escape(s.case_name + " @ " + s.build + ": " + s.why) + "</li>\n";
  if (!f.stopped.empty()) out += "</ul>\n";
  return out;
}

nlohmann::json failures_json(const CellFailures& f) {
  nlohmann::json failed = nlohmann::json::array(), stopped = nlohmann::json::array();
  for (const auto& c : f.failed)
    failed.push_back({{"case", c.case_name}, {"interpreter", c.build}, {"failed_runs", c.failed}, {"runs", c.runs},
                      {"cause", c.cause}, {"traceback", c.traceback}, {"stderr_file", c.stderr_file}});
  for (const auto& s : f.stopped) stopped.push_back({{"case", s.case_name}, {"interpreter", s.build}, {"why", s.why}});
  return {{"failed", failed}, {"stopped", stopped}};
}

}  // namespace gilhost
