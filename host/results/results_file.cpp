#include "results/results_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "util/clock.hpp"
#include "results/record_json.hpp"
#include "results/validate.hpp"
#include "util/json_depth.hpp"
#include "util/random_id.hpp"
#include "util/strings.hpp"

namespace gilhost {

std::string not_results_file_reason(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return "";
  // The first line: a meta record holds the experiment whole, so allow it room, but not the whole file.
  constexpr std::size_t kMaxFirstLine = 16u << 20;
  std::string head;
  char buf[65536];
  while (head.find('\n') == std::string::npos && head.size() < kMaxFirstLine) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
  }
  const bool whole_line = head.find('\n') != std::string::npos || head.size() == static_cast<std::size_t>(st.st_size);
  head.resize(std::min(head.size(), head.find('\n')));
  const std::string refusal = path + " is not a gilhost results file; refusing to append to it (name a new file, or "
                              "an empty one, with -o)";
  if (!whole_line || trim(head).empty() || json_nested_deeper_than(head)) return refusal;  // no meta is 16 MiB
  const auto j = nlohmann::json::parse(head, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type")) return refusal;
  const std::string problem = results_line_problem(j);
  return problem.empty() ? "" : refusal + " (its first line: " + problem + ")";
}

ResultsWriter::ResultsWriter(const std::string& path) : path_(path), session_id_(random_hex_id()) {
  if (const std::string why = not_results_file_reason(path); !why.empty()) throw std::runtime_error(why);
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd_) throw std::system_error(errno, std::generic_category(), "cannot open results file " + path);
  // Appending to a file whose last line was cut (a crash, kill -9 mid-write): end that line first, so it
  // stays one malformed line and our first record is not glued to it. (O_RDWR is for reading that byte.)
  struct stat st {};
  char last = '\n';
  if (::fstat(fd_.get(), &st) == 0) regular_ = S_ISREG(st.st_mode);
  if (regular_ && st.st_size > 0 && ::pread(fd_.get(), &last, 1, st.st_size - 1) == 1 &&
      last != '\n' && !write_all(fd_.get(), "\n", 1))
    throw std::system_error(errno, std::generic_category(), "cannot write results file " + path_);
}

ResultsWriter::~ResultsWriter() {
  if (fd_ && unsynced_ && regular_) ::fdatasync(fd_.get());  // best effort: a destructor cannot report
}

void ResultsWriter::sync() {
  if (!unsynced_ || !regular_) return;
  if (::fdatasync(fd_.get()) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot write results file " + path_);
  unsynced_ = false;
  last_sync_ns_ = monotonic_ns();
}

void ResultsWriter::append(const MetaRecord& record) {
  nlohmann::json j = to_json(record);
  if (record.session_id.empty()) j["session_id"] = session_id_;
  append_line(j);
}
void ResultsWriter::append(const RunRecord& record) {
  nlohmann::json j = to_json(record);
  stamp(j);
  append_line(j);
}
void ResultsWriter::append(const SkipRecord& record) {
  nlohmann::json j = to_json(record);
  stamp(j);
  append_line(j);
}

void ResultsWriter::stamp(nlohmann::json& record) {
  if (record.contains("session_id")) return;  // a record that has its identity keeps it
  record["session_id"] = session_id_;
  record["index"] = next_index_++;
}

namespace {
std::string json_line(const nlohmann::json& record) {
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}
}  // namespace

void ResultsWriter::append_line(const nlohmann::json& record) {
  // One write of one whole line: O_APPEND makes it land after everything before, never interleaved.
  const std::string line = json_line(record);
  if (!write_all(fd_.get(), line))
    throw std::system_error(errno, std::generic_category(), "cannot write results file " + path_);
  unsynced_ = true;
  // The first record at once (a session that dies early still has its meta on disk), then once a second.
  constexpr std::int64_t kSyncEveryNs = 1000000000;
  if (last_sync_ns_ == 0 || monotonic_ns() - last_sync_ns_ >= kSyncEveryNs) sync();
}

std::vector<nlohmann::json> read_json_lines(const std::string& path, int& malformed) {
  std::vector<nlohmann::json> lines;
  for (const auto& line : split(read_file(path), '\n')) {
    if (trim(line).empty()) continue;
    if (json_nested_deeper_than(line)) {  // no gilhost record nests so deep; reading on would recurse
      ++malformed;
      continue;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++malformed;
      continue;
    }
    lines.push_back(std::move(j));
  }
  return lines;
}

ResultsSet read_results(const std::string& path) {
  ResultsSet set;
  for (auto& j : read_json_lines(path, set.malformed_lines)) {
    if (j.value("type", "") == "meta") set.metas.push_back(std::move(j));
    else set.records.push_back(std::move(j));
  }
  return set;
}

std::string results_line_problem(const nlohmann::json& line) {
  try {
    line_from_json(line);
  } catch (const RecordError& e) {
    return e.what();
  }
  return "";
}

namespace {
// Each timeline keeps only its lock waits (report/threads counts them to tell a lock convoy).
void keep_lock_waits_only(ThreadStates& states) {
  for (auto& t : states.threads) {
    std::vector<ThreadSegment> locks;
    for (const auto& seg : t.timeline)
      if (seg.state == ThreadState::lock) locks.push_back(seg);
    t.timeline.swap(locks);
  }
}

// Leaves out what no run can measure, saying so (results/validate).
void check_figures(RunRecord& run, const std::string& where, std::vector<std::string>& notes) {
  if (std::string why = impossible_thread_states(run); !why.empty()) {
    run.thread_states.reset();
    notes.push_back(where + ": " + why + "; its thread states left out");
  }
  if (run.thread_states_sampled)
    if (std::string why = impossible_thread_states(*run.thread_states_sampled, run.parent_wall_ns); !why.empty()) {
      run.thread_states_sampled.reset();
      notes.push_back(where + ": " + why + "; its sampled thread states left out");
    }
  if (std::string why = impossible_run_figures(run); !why.empty()) {
    run.cpu_per_wall = 0;
    run.load_avg.reset();
    run.exec_ns = run.load_ns = run.exit_ns = std::nullopt;
    notes.push_back(where + ": " + why + "; its CPU share, load and phases left out");
  }
}
}  // namespace

namespace {

// Takes a file's lines one at a time into LoadedResults.
class LineLoader {
 public:
  LineLoader(const std::string& path, const ReadOptions& options) : options_(options) { out_.path = path; }

  void take(std::string_view line, std::int64_t offset) {
    ++number_;
    if (trim(line).empty()) return;
    if (json_nested_deeper_than(std::string(line))) {  // no gilhost record nests so deep; reading on would recurse
      ++out_.malformed_lines;
      return;
    }
    auto j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++out_.malformed_lines;  // e.g. the last line, cut by a crash
      return;
    }
    const std::string where = out_.path + ":" + std::to_string(number_);
    try {
      out_.lines.push_back(line_from_json(j));
    } catch (const RecordError& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
    if (auto* run = std::get_if<RunRecord>(&out_.lines.back())) {
      check_figures(*run, where, out_.impossible);
      // Where to read it again, whole: only for a run read without its timelines (a text read from
      // memory, as the fuzzer does, has no file to go back to, and needs none).
      if (!options_.timelines) {
        run->origin.read_from = out_.path;
        run->origin.offset = offset;
      }
      if (!options_.timelines)
        for (auto* states : {&run->thread_states, &run->thread_states_sampled})
          if (*states) keep_lock_waits_only(**states);
    }
  }

  LoadedResults finish() {
    if (out_.lines.empty())
      throw std::runtime_error(out_.path + ": no gilhost record in it" +
                               (out_.malformed_lines ? " (" + std::to_string(out_.malformed_lines) +
                                                           " lines, none of them JSON: not a results file?)"
                                                     : " (the file is empty)"));
    return std::move(out_);
  }

 private:
  ReadOptions options_;
  LoadedResults out_;
  std::size_t number_ = 0;
};

}  // namespace

void for_each_line(const std::string& path, const std::function<void(std::string_view, std::int64_t)>& on_line) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw std::system_error(errno, std::generic_category(), path);
  std::string pending;        // the start of a line whose end is not read yet
  std::int64_t pending_at = 0;  // its offset in the file
  std::string chunk(1 << 20, '\0');
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), path);
    if (n == 0) break;
    pending.append(chunk.data(), static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1)
      on_line(std::string_view(pending).substr(start, nl - start), pending_at + static_cast<std::int64_t>(start));
    pending.erase(0, start);
    pending_at += static_cast<std::int64_t>(start);
  }
  if (!pending.empty()) on_line(pending, pending_at);
}

LoadedResults load_results_ordered(const std::string& path, const ReadOptions& options) {
  LineLoader loader(path, options);
  for_each_line(path, [&](std::string_view line, std::int64_t offset) { loader.take(line, offset); });
  return loader.finish();
}

LoadedResults load_results_text(const std::string& text, const std::string& path) {
  LineLoader loader(path, {});
  std::int64_t offset = 0;
  for (const auto& line : split(text, '\n')) {
    loader.take(line, offset);
    offset += static_cast<std::int64_t>(line.size()) + 1;
  }
  return loader.finish();
}

RunRecord read_run_at(const std::string& path, std::int64_t offset) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd || ::lseek(fd.get(), offset, SEEK_SET) < 0) throw std::system_error(errno, std::generic_category(), path);
  std::string line;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), path);
    if (n == 0) break;
    const std::string_view got(buf, static_cast<std::size_t>(n));
    const std::size_t nl = got.find('\n');
    line.append(got.substr(0, nl));
    if (nl != std::string_view::npos) break;
  }
  const auto j = nlohmann::json::parse(line, nullptr, false);
  const std::string where = path + " at byte " + std::to_string(offset);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error(where + ": no longer the run record read before (was the file changed?)");
  try {
    RunRecord run = run_from_json(j);
    std::vector<std::string> ignored;  // said on the first read
    check_figures(run, where, ignored);
    run.origin.read_from = path;
    run.origin.offset = offset;
    return run;
  } catch (const RecordError& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
}

std::string to_jsonl_line(const ResultsLine& line) { return json_line(to_json(line)); }

std::string to_jsonl(const std::vector<ResultsLine>& lines) {
  std::string out;
  for (const auto& line : lines) out += json_line(to_json(line));
  return out;
}

std::string default_results_path(const std::string& name) {
  // The second and this process: two sessions started in the same second still write apart.
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  const std::string base = "results/" + name + "-" + stamp + "-" + std::to_string(::getpid());
  std::string path = base + ".jsonl";
  for (int n = 2; std::filesystem::exists(path); ++n) path = base + "-" + std::to_string(n) + ".jsonl";
  return path;
}

RunRecord read_run_again(const RunRecord& light) {
  RunRecord full = read_run_at(light.origin.read_from, light.origin.offset);
  const bool same = full.case_name == light.case_name && full.interpreter == light.interpreter &&
                    full.round == light.round && full.origin.session_id == light.origin.session_id &&
                    full.origin.index == light.origin.index && full.wall_ns == light.wall_ns;
  if (!same)
    throw std::runtime_error(light.origin.read_from + " at byte " + std::to_string(light.origin.offset) +
                             ": no longer the run record read before (was the file changed?)");
  return full;
}

}  // namespace gilhost
