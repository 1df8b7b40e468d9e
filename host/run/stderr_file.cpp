#include "run/stderr_file.hpp"

#include <cctype>
#include <filesystem>
#include <string>

#include "util/fd.hpp"

namespace gilhost {

namespace fs = std::filesystem;

std::string stderr_file_name(const RunRecord& r) {
  std::string name = r.case_name + "@" + r.interpreter + "-" + std::to_string(r.round);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("._=@+-").find(c) == std::string::npos) c = '_';
  return name + ".txt";
}

std::string write_stderr_file(const std::string& dir, const RunRecord& r) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "";  // a results file like /dev/null has no folder beside it: the record keeps the stderr
  // Absolute: a report read from another folder still finds it.
  const fs::path path = fs::absolute(fs::path(dir) / stderr_file_name(r), ec);
  // What the run captured (run/child: the first 1 MiB and the last 64 KiB): whole up to that bound, and
  // said at the top when the run wrote more.
  std::string text;
  if (r.stderr_bytes > static_cast<std::int64_t>(r.stderr_text.size()))
    text = "[gilhost: this run wrote " + std::to_string(r.stderr_bytes) + " bytes to stderr; kept here are its first 1 MiB " +
           "and last 64 KiB, with the bytes between left out where marked]\n";
  text += r.stderr_text;
  try {
    write_file_atomic(path.string(), text);  // a temporary and a rename: a link planted at the name is replaced, not followed
  } catch (const std::exception&) {
    return "";
  }
  return path.string();
}

}  // namespace gilhost
