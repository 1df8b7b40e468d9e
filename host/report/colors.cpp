#include "report/colors.hpp"

#include <fmt/format.h>

#include <regex>

namespace gilhost {

namespace {

// FNV-1a: the same label gets the same colour on every machine and run.
unsigned stable_hash(const std::string& s) {
  unsigned h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// Hues far apart for the versions reports compare most.
int minor_hue(int major, int minor) {
  if (major != 3) return static_cast<int>(stable_hash(std::to_string(major) + "." + std::to_string(minor)) % 360);
  static const int hues[] = {330, 275, 95, 25, 150, 212, 0, 55};  // 3.9 .. 3.16: 3.12 orange, 3.13 green, 3.14 blue
  if (minor >= 9 && minor <= 16) return hues[minor - 9];
  return (minor * 47) % 360;
}

}  // namespace

std::string build_color(const std::string& label) {
  static const std::regex version(R"(^(\d+)\.(\d+)(?:\.\d+)?(t?)(\+gil)?(.*)$)");
  std::smatch m;
  int hue = 0, lightness = 45;
  std::string rest = label;
  if (std::regex_match(label, m, version)) {
    hue = minor_hue(std::stoi(m[1]), std::stoi(m[2]));
    lightness = m[4].matched ? 66 : m[3].length() ? 30 : 45;
    rest = label.substr(0, static_cast<std::size_t>(m.position(3)));  // the version with its patch level
    rest += m[5].str();
    if (rest == m[1].str() + "." + m[2].str()) rest.clear();
  } else {
    hue = static_cast<int>(stable_hash(label) % 360);
  }
  // Two builds of one minor version (3.12.1, 3.12.3; or one per machine) drift apart by a few degrees.
  const int nudge = rest.empty() ? 0 : static_cast<int>(stable_hash(rest) % 7) * 4 - 12;
  return fmt::format("hsl({},{}%,{}%)", ((hue + nudge) % 360 + 360) % 360, 65, lightness);
}

}  // namespace gilhost
