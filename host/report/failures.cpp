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

// "bad @ 3.12.1, 3.14.7" where the cells (case, build) share a case, else "a @ 3.12.1, b @ 3.14.7".
std::string cells_text(const std::vector<std::pair<std::string, std::string>>& cells) {
  const bool one_case = std::all_of(cells.begin(), cells.end(), [&](const auto& c) { return c.first == cells.front().first; });
  std::vector<std::string> names;
  for (const auto& [case_name, build] : cells) names.push_back(one_case ? build : case_name + " @ " + build);
  return (one_case ? cells.front().first + " @ " : "") + join(names, ", ");
}

std::string group_cells_text(const FailureGroup& g) {
  std::vector<std::pair<std::string, std::string>> cells;
  for (const FailedCell* c : g) cells.emplace_back(c->case_name, c->build);
  return cells_text(cells);
}

// "1 of 1 runs failed on each", "3.12.1: 1 of 3, 3.14.7: 2 of 3 runs failed"; "did not run: " first where
// no failed run reached the case.
std::string group_runs_text(const FailureGroup& g) {
  const bool alike = std::all_of(g.begin(), g.end(), [&](const FailedCell* c) { return c->failed == g.front()->failed && c->runs == g.front()->runs; });
  std::string runs;
  if (alike) {
    runs = runs_text(*g.front()) + (g.size() > 1 ? " on each" : "");
  } else {
    std::vector<std::string> each;
    for (const FailedCell* c : g) each.push_back(fmt::format("{}: {} of {}", c->build, c->failed, c->runs));
    runs = join(each, ", ") + " runs failed";
  }
  const bool never = std::all_of(g.begin(), g.end(), [](const FailedCell* c) { return c->never_started; });
  return (never ? "did not run: " : "") + runs;
}

// The cells that stopped repeating, by why: "bad @ 3.12.1, 3.14.7" once for a reason they share.
std::vector<std::pair<std::string, std::string>> stopped_by_why(const std::vector<StoppedCell>& stopped) {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> groups;
  for (const auto& s : stopped) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == s.why; });
    if (it == groups.end()) it = groups.insert(groups.end(), {s.why, {}});
    it->second.emplace_back(s.case_name, s.build);
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [why, cells] : groups) out.emplace_back(why, cells_text(cells));
  return out;
}

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

bool case_never_started(const RunRecord& r) {
  if (r.status != RunStatus::error) return false;
  if (r.wall_ns <= 0) return true;
  // The runner's frames are in <gilhost-bootstrap>: in the last traceback, the first of them is the phase
  // that raised (_prepare or _run; those it called, such as _compile, follow it).
  const std::string frame = "File \"<gilhost-bootstrap>\"";
  const std::size_t block = r.stderr_text.rfind("Traceback (most recent call last):");
  const std::size_t at = r.stderr_text.find(frame, block == std::string::npos ? 0 : block);
  if (at == std::string::npos) return false;
  const std::size_t end = r.stderr_text.find('\n', at);
  return ends_with(r.stderr_text.substr(at, end == std::string::npos ? std::string::npos : end - at), "in _prepare");
}

std::vector<std::string> script_traceback(const std::string& stderr_text, std::size_t n) {
  std::vector<std::string> lines;
  bool heading = false, frames = false;
  for (auto& line : split(stderr_text, '\n')) {
    if (trim(line).rfind("File \"<gilhost-bootstrap>\"", 0) == 0) continue;
    if (line == "Traceback (most recent call last):") heading = true;
    // A frame names its function; a syntax error's location does not.
    if (trim(line).rfind("File \"", 0) == 0 && line.find(", in ") != std::string::npos) frames = true;
    lines.push_back(std::move(line));
  }
  if (heading && !frames)
    lines.erase(std::remove(lines.begin(), lines.end(), "Traceback (most recent call last):"), lines.end());
  return last_lines(join(lines, "\n"), n);
}

std::vector<FailureGroup> group_failures(const std::vector<FailedCell>& failed) {
  std::vector<FailureGroup> out;
  for (const auto& c : failed) {
    auto same = std::find_if(out.begin(), out.end(), [&](const FailureGroup& g) {
      return g.front()->cause == c.cause && g.front()->traceback == c.traceback && g.front()->never_started == c.never_started;
    });
    if (same == out.end()) out.push_back({&c});
    else same->push_back(&c);
  }
  return out;
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
      out.failed.push_back({r.case_name, r.interpreter, 0, 0, "", {}, "", false});
    }
    FailedCell& c = out.failed[it->second];
    ++c.runs;
    if (r.is_ok()) continue;
    c.never_started = (c.failed == 0 || c.never_started) && case_never_started(r);
    ++c.failed;
    c.cause = failure_cause(r);
    c.traceback = script_traceback(r.stderr_text, 6);
    c.stderr_file = r.stderr_file;
  }
  out.failed.erase(std::remove_if(out.failed.begin(), out.failed.end(), [](const FailedCell& c) { return c.failed == 0; }),
                   out.failed.end());
  return out;
}

std::string failures_text(const CellFailures& f) {
  std::string out;
  if (!f.failed.empty()) out += "\nfailed:\n";
  for (const FailureGroup& g : group_failures(f.failed)) {
    out += "  ✗ " + group_cells_text(g) + " (" + group_runs_text(g) + "): " + g.front()->cause + "\n";
    for (const auto& line : g.front()->traceback) out += kUnwrappedLine + ("      " + line) + "\n";
    for (const FailedCell* c : g)
      if (!c->stderr_file.empty()) out += kUnwrappedLine + ("      full stderr: " + c->stderr_file) + "\n";
  }
  if (!f.stopped.empty()) out += "\nstopped repeating:\n";
  for (const auto& [why, cells] : stopped_by_why(f.stopped)) out += "  " + cells + ": " + why + "\n";
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
