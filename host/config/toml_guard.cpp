#include "config/toml_guard.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "util/strings.hpp"

namespace gilhost {

namespace {

constexpr char32_t kStandInBase = 0xF0000;  // plane 15, private use: far above toml++'s tables
constexpr char32_t kHazardBase = 0xA0;

struct CodePoint {
  char32_t value = 0;
  std::size_t length = 1;  // bytes
  bool valid = false;      // strict UTF-8 (no overlong forms, no surrogates), as toml++'s decoder reads it
};

CodePoint decode_at(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1, true};
  std::size_t n = 0;
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) n = 2, cp = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF) n = 3, cp = lead & 0x0F;
  else if (lead >= 0xF0 && lead <= 0xF4) n = 4, cp = lead & 0x07;
  else return {};
  if (i + n > s.size()) return {};
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const bool shortest = (n == 2 && cp >= 0x80) || (n == 3 && cp >= 0x800) || (n == 4 && cp >= 0x10000);
  if (!shortest || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return {};
  return {cp, n, true};
}

char32_t stand_in_for(char32_t hazard) { return kStandInBase + (hazard - kHazardBase); }
bool is_stand_in(char32_t cp) {
  return cp >= kStandInBase && cp < kStandInBase + 0x10000 && is_toml_hazard(cp - kStandInBase + kHazardBase);
}
char32_t original_of(char32_t stand_in) { return stand_in - kStandInBase + kHazardBase; }

// The value of a \UXXXXXXXX escape at `i`, if one starts there.
std::optional<char32_t> long_escape_at(std::string_view s, std::size_t i) {
  if (i + 10 > s.size() || s[i] != '\\' || s[i + 1] != 'U') return std::nullopt;
  char32_t v = 0;
  for (std::size_t k = i + 2; k < i + 10; ++k) {
    const char c = s[k];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return std::nullopt;
    v = (v << 4) | static_cast<char32_t>(digit);
  }
  return v;
}

std::string u_plus(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

bool holds_stand_in(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const CodePoint cp = decode_at(s, i);
    if (cp.valid && is_stand_in(cp.value)) return true;
    i += cp.length;
  }
  return false;
}

void restore_node(toml::node& node) {
  if (auto* table = node.as_table()) {
    restore_toml(*table);
  } else if (auto* array = node.as_array()) {
    for (auto& item : *array) restore_node(item);
  } else if (auto* string = node.as_string()) {
    if (holds_stand_in(string->get())) string->get() = restore_toml(string->get());
  }
}

}  // namespace

bool is_toml_hazard(char32_t c) {
  // toml++ 3.3.0's is_non_ascii_horizontal_whitespace(): after its range check, its bitmask of 64 "child"
  // blocks and its three single characters, a switch with cases for blocks 5 and 7 only; every other
  // block falls into `default: TOML_UNREACHABLE`.
  if (c < 0xA0 || c > 0xFEFF) return false;
  const auto child = (static_cast<std::uint64_t>(c) - 0xA0u) / 0x3FAu;
  if ((1ull << child) & 0x7FFFFFFFFFFFF75Eull) return false;
  if (c == 0xA0 || c == 0x3000 || c == 0xFEFF) return false;
  return child != 5 && child != 7;
}

GuardedToml guard_toml(std::string_view text) {
  GuardedToml out;
  out.text.reserve(text.size() + text.size() / 2);
  int line = 1, column = 1;
  auto reserve_error = [&](char32_t cp, const char* how) {
    if (out.reserved) return;
    out.reserved = TomlHazard{line, column,
                              u_plus(cp) + std::string(how) + " is a private-use character gilhost's TOML reader "
                                                              "uses itself (as a stand-in for " +
                                  u_plus(original_of(cp)) + "): it cannot appear in an experiment file"};
  };
  for (std::size_t i = 0; i < text.size();) {
    const CodePoint cp = decode_at(text, i);
    if (cp.valid && is_toml_hazard(cp.value)) {
      out.text += utf8_encode(stand_in_for(cp.value));
    } else {
      if (cp.valid && is_stand_in(cp.value)) reserve_error(cp.value, "");
      if (auto escaped = long_escape_at(text, i); escaped && is_stand_in(*escaped)) reserve_error(*escaped, " (escaped)");
      out.text.append(text, i, cp.length);
    }
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += cp.length;
  }
  return out;
}

std::string restore_toml(std::string_view guarded) {
  std::string out;
  out.reserve(guarded.size());
  for (std::size_t i = 0; i < guarded.size();) {
    if (auto escaped = long_escape_at(guarded, i); escaped && is_stand_in(*escaped)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(original_of(*escaped)));
      out += buf;
      i += 10;
      continue;
    }
    const CodePoint cp = decode_at(guarded, i);
    if (cp.valid && is_stand_in(cp.value)) out += utf8_encode(original_of(cp.value));
    else out.append(guarded, i, cp.length);
    i += cp.length;
  }
  return out;
}

void restore_toml(toml::table& root) {
  std::vector<std::string> renamed;  // keys that hold stand-ins (quoted keys only: bare keys are ASCII)
  for (auto&& [key, node] : root) {
    restore_node(node);
    if (holds_stand_in(key.str())) renamed.emplace_back(key.str());
  }
  for (const auto& name : renamed) {
    const auto it = root.find(name);
    toml::key restored(restore_toml(name), it->first.source());
    // Moving a node keeps its source region; the old entry is left empty and erased.
    it->second.visit([&](auto& node) { root.insert(std::move(restored), std::move(node)); });
    root.erase(name);
  }
}

}  // namespace gilhost
