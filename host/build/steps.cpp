#include "build/steps.hpp"

#include <fcntl.h>
#include <string.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "util/clock.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

std::string elapsed_text(double s) {
  const int whole = static_cast<int>(s);
  if (whole < 60) return std::to_string(whole) + "s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%dm%02ds", whole / 60, whole % 60);
  return buf;
}

// One argument as a shell would need it, for the log's record of the command.
std::string shell_word(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>(){}*?!#~") == std::string::npos) return a;
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string StepOutcome::how_it_ended() const {
  if (process.signal) return std::string("was killed by signal ") + std::to_string(process.signal) + " (" + ::strsignal(process.signal) + ")";
  if (process.exit_code == 127) return "could not be started (exit status 127)";
  return "exited with status " + std::to_string(process.exit_code);
}

StepRunner::StepRunner(const std::string& log_path, int total_steps, bool tty, std::FILE* progress)
    : log_path_(log_path), log_(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)),
      total_(total_steps), tty_(tty), progress_(progress) {
  if (!log_) throw std::system_error(errno, std::generic_category(), log_path);
}

void StepRunner::log(const std::string& text) { write_all(log_.get(), text); }

void StepRunner::note(const std::string& line) {
  log("==> " + line + "\n");
  std::fprintf(progress_, "gilhost: %s\n", line.c_str());
}

void StepRunner::show(const std::string& status, double elapsed_s, bool final_line) {
  const std::string head = "[" + std::to_string(index_) + "/" + std::to_string(total_) + "] " + step_;
  std::string text = head + (status.empty() ? "" : " " + status) + " (" + elapsed_text(elapsed_s) + ")";
  std::fprintf(progress_, "\r\033[K%s%s", text.c_str(), final_line ? "\n" : "");
  std::fflush(progress_);
}

StepOutcome StepRunner::run(const std::string& name, const std::vector<std::string>& argv, const ProcessOptions& options,
                            const std::function<std::string(const std::string&)>& on_line) {
  ++index_;
  step_ = name;
  std::vector<std::string> words;
  for (const auto& a : argv) words.push_back(shell_word(a));
  const std::string command = join(words, " ");
  log("==> [" + std::to_string(index_) + "/" + std::to_string(total_) + "] " + name + ": " +
      (options.cwd.empty() ? "" : "cd " + shell_word(options.cwd) + " && ") + command + "\n");
  if (tty_) show("", 0, false);
  else std::fprintf(progress_, "gilhost: [%d/%d] %s: %s\n", index_, total_, name.c_str(), argv.front().c_str());

  StepOutcome outcome;
  const std::int64_t start = monotonic_ns();
  std::int64_t next_show = 0;
  std::string status, partial;
  auto take_line = [&](const std::string& line) {
    outcome.tail.push_back(line);
    if (outcome.tail.size() > kTailLines) outcome.tail.pop_front();
    if (on_line) {
      std::string s = on_line(line);
      if (!s.empty()) status = std::move(s);
    }
  };
  ProcessOptions o = options;
  o.merge_stderr = true;  // one log, in the order things happened
  outcome.process = run_process(argv, o, [&](int, std::string_view data) {
    write_all(log_.get(), data.data(), data.size());
    partial.append(data);
    std::size_t nl;
    while ((nl = partial.find('\n')) != std::string::npos) {
      take_line(partial.substr(0, nl));
      partial.erase(0, nl + 1);
    }
    const std::int64_t now = monotonic_ns();
    if (tty_ && now >= next_show) {
      show(status, static_cast<double>(now - start) / 1e9, false);
      next_show = now + 200000000;  // five redraws a second are plenty
    }
  });
  if (!partial.empty()) {
    take_line(partial);
    log("\n");
  }
  const double elapsed = static_cast<double>(monotonic_ns() - start) / 1e9;
  log("==> " + name + " " + (outcome.process.interrupted ? std::string("interrupted") : outcome.how_it_ended()) + " after " +
      elapsed_text(elapsed) + "\n");
  if (tty_) show(outcome.process.interrupted ? "interrupted" : outcome.ok() ? "done" : "failed", elapsed, true);
  return outcome;
}

}  // namespace gilhost
