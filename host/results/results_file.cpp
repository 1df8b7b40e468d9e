#include "results/results_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "util/clock.hpp"
#include "results/record_json.hpp"
#include "util/json_depth.hpp"
#include "util/strings.hpp"

namespace gilhost {

ResultsWriter::ResultsWriter(const std::string& path) : path_(path) {
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

void ResultsWriter::append(const MetaRecord& record) { append_line(to_json(record)); }
void ResultsWriter::append(const RunRecord& record) { append_line(to_json(record)); }
void ResultsWriter::append(const SkipRecord& record) { append_line(to_json(record)); }

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

LoadedResults load_results_ordered(const std::string& path) { return load_results_text(read_file(path), path); }

LoadedResults load_results_text(const std::string& text, const std::string& path) {
  LoadedResults out;
  out.path = path;
  const std::vector<std::string> lines = split(text, '\n');
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (trim(lines[n]).empty()) continue;
    if (json_nested_deeper_than(lines[n])) {  // no gilhost record nests so deep; reading on would recurse
      ++out.malformed_lines;
      continue;
    }
    auto j = nlohmann::json::parse(lines[n], nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++out.malformed_lines;  // e.g. the last line, cut by a crash
      continue;
    }
    try {
      out.lines.push_back(line_from_json(j));
    } catch (const RecordError& e) {
      throw std::runtime_error(path + ":" + std::to_string(n + 1) + ": " + e.what());
    }
  }
  if (out.lines.empty())
    throw std::runtime_error(path + ": no gilhost record in it" +
                             (out.malformed_lines ? " (" + std::to_string(out.malformed_lines) +
                                                        " lines, none of them JSON: not a results file?)"
                                                  : " (the file is empty)"));
  return out;
}

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

}  // namespace gilhost
