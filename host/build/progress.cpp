#include "build/progress.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

#include "util/strings.hpp"

namespace gilhost {

std::size_t count_object_targets(const std::string& makefile) {
  static const std::regex object(R"((^|[\s=:])([A-Za-z0-9_./$()+-]+\.o)(?=$|[\s:\\]))");
  std::set<std::string> names;
  std::istringstream in(makefile);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(".o") == std::string::npos) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), object), end; it != end; ++it) {
      const std::string name = (*it)[2].str();
      // Pattern rules and variable references name no file of their own.
      if (name.find('%') == std::string::npos && name.find('$') == std::string::npos) names.insert(name);
    }
  }
  return names.size();
}

std::string compiled_object(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  if (std::find(words.begin(), words.end(), "-c") == words.end()) return "";
  for (std::size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == "-o" && ends_with(words[i + 1], ".o")) return words[i + 1];
  return "";
}

void CompileProgress::feed(const std::string& line) {
  std::string object = compiled_object(line);
  if (!object.empty()) done_.insert(std::move(object));
}

std::string CompileProgress::status() const {
  if (done_.empty()) return "";
  if (expected_ == 0) return std::to_string(done_.size()) + " files";
  const std::size_t pct = std::min<std::size_t>(99, done_.size() * 100 / expected_);
  return std::to_string(pct) + "% (" + std::to_string(done_.size()) + "/" + std::to_string(expected_) + ")";
}

}  // namespace gilhost
