#include "util/version.hpp"

#include <stdexcept>

#include "util/strings.hpp"

namespace gilhost {

namespace {
// Parses "3.12.1" into a version and how many components were written.
std::optional<std::pair<Version, int>> parse_parts(const std::string& text) {
  auto parts = split(trim(text), '.');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  int vals[3] = {0, 0, 0};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || parts[i].size() > 6) return std::nullopt;
    for (char c : parts[i])
      if (c < '0' || c > '9') return std::nullopt;
    vals[i] = std::stoi(parts[i]);
  }
  return std::make_pair(Version{vals[0], vals[1], vals[2]}, static_cast<int>(parts.size()));
}

// Compares only the first `parts` components.
int compare_prefix(const Version& a, const Version& b, int parts) {
  int av[3] = {a.major, a.minor, a.micro}, bv[3] = {b.major, b.minor, b.micro};
  for (int i = 0; i < parts; ++i)
    if (av[i] != bv[i]) return av[i] < bv[i] ? -1 : 1;
  return 0;
}
}  // namespace

std::optional<Version> Version::parse(const std::string& text) {
  auto p = parse_parts(text);
  if (!p) return std::nullopt;
  return p->first;
}

std::string Version::str() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(micro);
}

VersionSpec VersionSpec::parse(const std::string& text) {
  VersionSpec spec;
  spec.text_ = text;
  for (const auto& raw : split(text, ',')) {
    std::string clause = trim(raw);
    std::string op;
    for (const char* candidate : {">=", "<=", "==", "!=", ">", "<"}) {
      if (starts_with(clause, candidate)) {
        op = candidate;
        break;
      }
    }
    std::string rest = trim(clause.substr(op.size()));
    auto parsed = parse_parts(rest);
    if (!parsed)
      throw std::invalid_argument("bad version spec '" + text +
                                  "': expected clauses like \">=3.10\", \"<3.13\" or \"3.12\", joined by commas");
    spec.clauses_.push_back(Clause{op.empty() ? "==" : op, parsed->first, parsed->second});
  }
  return spec;
}

bool VersionSpec::matches(const Version& v) const {
  for (const auto& c : clauses_) {
    int cmp = compare_prefix(v, c.version, c.parts);
    bool ok = (c.op == ">=" && cmp >= 0) || (c.op == "<=" && cmp <= 0) || (c.op == ">" && cmp > 0) ||
              (c.op == "<" && cmp < 0) || (c.op == "==" && cmp == 0) || (c.op == "!=" && cmp != 0);
    if (!ok) return false;
  }
  return true;
}

}  // namespace gilhost
