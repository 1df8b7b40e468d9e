#include "build/label.hpp"

#include <cctype>
#include <map>

#include "util/checksum.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

bool is_word(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return true;
}

// A word for one configure flag, or "" when it has none (a value, a variable, anything else).
std::string flag_word(const std::string& arg) {
  // Shorter names for the flags people know by them.
  static const std::map<std::string, std::string> known = {
      {"--enable-optimizations", "pgo"},          {"--enable-experimental-jit", "jit"},
      {"--with-address-sanitizer", "asan"},       {"--with-thread-sanitizer", "tsan"},
      {"--with-memory-sanitizer", "msan"},        {"--with-undefined-behavior-sanitizer", "ubsan"},
  };
  if (auto it = known.find(arg); it != known.end()) return it->second;
  for (const auto& [prefix, negative] : {std::pair<const char*, bool>{"--with-", false}, {"--enable-", false},
                                         {"--without-", true}, {"--disable-", true}}) {
    if (!starts_with(arg, prefix)) continue;
    const std::string rest = arg.substr(std::string(prefix).size());
    return is_word(rest) ? (negative ? "no" : "") + rest : "";
  }
  return "";
}

}  // namespace

std::string derive_label(const std::string& version, bool free_threaded, const std::vector<std::string>& configure_args) {
  // "3.15.0a1+" (a development tree): the label keeps what a folder name should.
  std::string label;
  for (char c : version)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.') label += c;
  if (free_threaded) label += 't';
  if (configure_args.empty()) return label;
  std::vector<std::string> words;
  for (const auto& a : configure_args) {
    const std::string w = flag_word(a);
    if (w.empty()) {
      words.clear();
      break;
    }
    words.push_back(w);
  }
  std::string suffix = join(words, "-");
  if (suffix.empty() || suffix.size() > 32) suffix = hex64(fnv1a64(join(configure_args, std::string(1, '\0')))).substr(0, 8);
  return label + "-" + suffix;
}

std::string label_problem(const std::string& name) {
  if (name.empty()) return "a label cannot be empty";
  if (name.size() > 64) return "a label has at most 64 characters";
  if (name[0] == '.' || name[0] == '-') return "a label cannot start with '" + std::string(1, name[0]) + "'";
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-'))
      return "a label has only letters, digits and . _ + - ('" + name + "' has '" + std::string(1, c) + "')";
  return "";
}

}  // namespace gilhost
