#include "run/results_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <system_error>

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
  if (::fstat(fd_.get(), &st) == 0 && st.st_size > 0 && ::pread(fd_.get(), &last, 1, st.st_size - 1) == 1 &&
      last != '\n' && !write_all(fd_.get(), "\n", 1))
    throw std::system_error(errno, std::generic_category(), "cannot write results file " + path_);
}

void ResultsWriter::append(const nlohmann::json& record) {
  // One write of one whole line: O_APPEND makes it land after everything before, never interleaved.
  const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (!write_all(fd_.get(), line) || ::fdatasync(fd_.get()) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot write results file " + path_);
}

std::vector<nlohmann::json> read_json_lines(const std::string& path, int& malformed) {
  std::vector<nlohmann::json> lines;
  for (const auto& line : split(read_file(path), '\n')) {
    if (trim(line).empty()) continue;
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
  const auto type = line.find("type");
  if (type == line.end() || !type->is_string()) return "not a gilhost record (it has no \"type\")";
  const std::string t = type->get<std::string>();
  if (t == "meta") {
    const auto format = line.find("format");
    if (format == line.end()) return "a meta record without \"format\"";
    if (!format->is_number_integer() || format->get<long long>() != kResultsFormat)
      return "results format " + format->dump() + " is not one this gilhost reads (format " +
             std::to_string(kResultsFormat) + "; was it written by a newer gilhost?)";
    return "";
  }
  if (t == "run") {
    std::vector<std::string> missing;
    for (const char* key : {"experiment", "case", "interpreter", "status"})
      if (!line.contains(key) || !line[key].is_string()) missing.push_back(std::string("\"") + key + "\"");
    if (!line.contains("wall_ns") || !line["wall_ns"].is_number()) missing.push_back("\"wall_ns\"");
    if (!missing.empty()) return "a run record without " + join(missing, ", ");
    return "";
  }
  if (t == "skip") return "";
  return "unknown record type \"" + t + "\"";
}

std::string default_results_path(const std::string& name) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return "results/" + name + "-" + stamp + ".jsonl";
}

}  // namespace gilhost
