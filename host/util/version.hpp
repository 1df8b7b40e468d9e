#pragma once
// Python versions and version specs such as ">=3.10,<3.13".
#include <optional>
#include <string>
#include <vector>

namespace gilhost {

struct Version {
  int major = 0, minor = 0, micro = 0;
  static std::optional<Version> parse(const std::string& text);  // "3", "3.12", "3.12.1"
  std::string str() const;
  std::string minor_str() const { return std::to_string(major) + "." + std::to_string(minor); }
  friend bool operator==(const Version& a, const Version& b) { return a.key() == b.key(); }
  friend bool operator<(const Version& a, const Version& b) { return a.key() < b.key(); }
  long key() const { return major * 1000000L + minor * 1000L + micro; }
};

// A comma-separated conjunction of clauses: ">=3.10", "<3.13", "==3.12", "3.12" (any 3.12.x),
// "!=3.11". A clause with fewer components compares only those (so "<=3.12" includes 3.12.9).
class VersionSpec {
 public:
  // Throws std::invalid_argument with a message a user can act on.
  static VersionSpec parse(const std::string& text);
  bool matches(const Version& v) const;
  const std::string& text() const { return text_; }

 private:
  struct Clause {
    std::string op;
    Version version;
    int parts = 3;
  };
  std::vector<Clause> clauses_;
  std::string text_;
};

}  // namespace gilhost
