#include "config/toml_guard.hpp"

#include <algorithm>
#include <cstdio>

namespace gilhost {

namespace {

// Length of the UTF-8 sequence led by `b` (1 for ASCII and for bytes that lead nothing valid).
std::size_t utf8_length(unsigned char b) {
  if (b < 0xC2) return 1;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  if (b < 0xF5) return 4;
  return 1;
}

// The code point at `i` (which is `n` bytes long), or -1 when the bytes are not valid UTF-8.
long decode(const std::string& s, std::size_t i, std::size_t n) {
  if (n == 1) return static_cast<unsigned char>(s[i]) < 0x80 ? static_cast<unsigned char>(s[i]) : -1;
  if (i + n > s.size()) return -1;
  static const unsigned char lead_mask[] = {0, 0, 0x1F, 0x0F, 0x07};
  long cp = static_cast<unsigned char>(s[i]) & lead_mask[n];
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (c & 0x3F);
  }
  return cp;
}

std::string describe(const std::string& s, std::size_t i, std::size_t n, long cp) {
  char buf[64];
  if (cp < 0) {
    std::snprintf(buf, sizeof buf, "byte 0x%02X (not UTF-8)", static_cast<unsigned>(static_cast<unsigned char>(s[i])));
    return buf;
  }
  std::snprintf(buf, sizeof buf, " (U+%04lX)", cp);
  return "'" + s.substr(i, n) + "'" + buf;
}

class Scanner {
 public:
  explicit Scanner(const std::string& in) : in_(in) {}

  GuardedToml run() {
    if (in_.compare(0, 3, "\xEF\xBB\xBF") == 0) {  // a BOM, which toml++ skips: no column of its own
      out_.text.append(in_, 0, 3);
      i_ = 3;
    }
    while (i_ < in_.size() && !out_.hazard && !stopped_) {
      const char c = in_[i_];
      const bool quote = c == '"' || c == '\'';
      if (c == '#') {
        comment();
      } else if (quote && !string_may_start()) {
        // Inside a token (`1979-01-01"x`): toml++ reads on for the token's end, asking of each character
        // whether it is whitespace, so what follows is outside any string.
        copy(1);
      } else if (quote) {
        if (in_.compare(i_, 3, "\"\"\"") == 0) multi_line_basic();
        else if (in_.compare(i_, 3, "'''") == 0) multi_line_literal();
        else single_line(c, c == '"');
        prev_ = '"';
        continue;
      } else if (static_cast<unsigned char>(c) >= 0x80) {
        hazard("unexpected character " + here() + ": outside strings and comments TOML allows only ASCII");
      } else {
        structure(c);
        copy(1);
      }
      prev_ = c;
    }
    // Stopped at a lexical error: toml++ fails there before reading further, so the rest goes as it is.
    if (!out_.hazard) out_.text.append(in_, i_, std::string::npos);
    return std::move(out_);
  }

 private:
  // The code point at the cursor, for messages.
  std::string here() const {
    const std::size_t n = utf8_length(static_cast<unsigned char>(in_[i_]));
    return describe(in_, i_, n, decode(in_, i_, n));
  }
  void hazard(std::string message) { out_.hazard = TomlHazard{i_, line_, column_, std::move(message)}; }
  bool at(char c) const { return i_ < in_.size() && in_[i_] == c; }
  bool at_newline() const { return at('\n') || (at('\r') && i_ + 1 < in_.size() && in_[i_ + 1] == '\n'); }

  // Copies the next `count` code points to the output, advancing line and column.
  void copy(std::size_t count = 1) {
    for (; count > 0 && i_ < in_.size(); --count) {
      const std::size_t bytes = std::min(in_.size() - i_, utf8_length(static_cast<unsigned char>(in_[i_])));
      if (in_[i_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
      out_.text.append(in_, i_, bytes);
      i_ += bytes;
    }
  }

  // Where toml++ starts a string: where a key or a value starts (in dotted keys, after a '.').
  bool string_may_start() const {
    switch (prev_) {
      case '\n': case '\r': case ' ': case '\t': case '=': case '[': case '{': case ',': return true;
      case '.': return key_context();
      default: return false;
    }
  }
  bool key_context() const { return expect_key_ || (!open_.empty() && open_.back() == '#'); }
  // Whether keys or values come next: '[' opens a table header ('#') or an array ('['), '{' a table.
  void structure(char c) {
    switch (c) {
      case '\n':
        if (open_.empty()) expect_key_ = true;
        break;
      case '=': expect_key_ = false; break;
      case '[':
        if (key_context() && (open_.empty() || open_.back() == '#')) {
          open_.push_back('#');
        } else {
          open_.push_back('[');
          expect_key_ = false;
        }
        break;
      case '{':
        open_.push_back('{');
        expect_key_ = true;
        break;
      case ']': case '}':
        if (!open_.empty()) open_.pop_back();
        if (c == '}') expect_key_ = false;
        break;
      case ',': expect_key_ = !open_.empty() && open_.back() == '{'; break;
      default: break;
    }
  }

  void comment() {
    while (i_ < in_.size() && !at('\n')) copy();
  }

  // "..." or '...': a newline before the closing quote is toml++'s error, found before anything later.
  void single_line(char quote, bool escapes) {
    copy(1);
    while (i_ < in_.size()) {
      if (at('\n')) {
        stopped_ = true;
        return;
      }
      if (at(quote)) {
        copy(1);
        return;
      }
      if (escapes && at('\\')) {
        copy(1);
        if (i_ >= in_.size() || at('\n')) continue;
      }
      copy();
    }
  }

  // Closing delimiters: three quotes, or four or five (one or two of them belong to the string).
  bool closes(char quote) {
    std::size_t n = 0;
    while (i_ + n < in_.size() && in_[i_ + n] == quote && n < 5) ++n;
    if (n < 3) return false;
    copy(n);
    return true;
  }

  void multi_line_literal() {
    copy(3);
    while (i_ < in_.size()) {
      if (at('\'') && closes('\'')) return;
      copy();
    }
  }

  void multi_line_basic() {
    copy(3);
    bool skipping = false;  // after a line-ending backslash: whitespace and newlines are dropped
    while (i_ < in_.size() && !out_.hazard && !stopped_) {
      if (at('"')) {
        if (closes('"')) return;
        skipping = false;
        copy(1);
        continue;
      }
      if (at('\\')) {
        skipping = false;
        copy(1);
        if (i_ >= in_.size()) return;
        const unsigned char next = static_cast<unsigned char>(in_[i_]);
        if (next >= 0x80) {
          hazard("unknown escape sequence '\\' followed by " + here());
          return;
        }
        if (next == ' ' || next == '\t' || at_newline()) {
          while (at(' ') || at('\t')) copy(1);
          // toml++ asks whether the character that ends the run of whitespace is whitespace too.
          if (i_ < in_.size() && static_cast<unsigned char>(in_[i_]) >= 0x80) {
            hazard("line-ending backslashes must be the last non-whitespace character on the line, saw " + here());
            return;
          }
          if (!at_newline()) {  // the same error, from toml++
            stopped_ = true;
            return;
          }
          skipping = true;
          continue;
        }
        copy(1);  // the escaped character (\u and \U digits follow as plain text)
        continue;
      }
      if (skipping) {
        if (at(' ') || at('\t') || at('\n') || at('\r')) {
          copy(1);
          continue;
        }
        skipping = false;
        const std::size_t n = utf8_length(static_cast<unsigned char>(in_[i_]));
        const long cp = decode(in_, i_, n);
        if (cp >= 0x80) {
          escape(cp, n);
          continue;
        }
      }
      copy();
    }
  }

  // The code point at the cursor written as \uXXXX or \UXXXXXXXX, which toml++ reads without asking
  // whether it is whitespace.
  void escape(long cp, std::size_t bytes) {
    char buf[16];
    std::snprintf(buf, sizeof buf, cp <= 0xFFFF ? "\\u%04lX" : "\\U%08lX", cp);
    const std::string esc(buf);
    out_.text += esc;
    out_.shifts.push_back({line_, column_, static_cast<int>(esc.size()) - 1});
    i_ += bytes;
    ++column_;
  }

  const std::string& in_;
  std::size_t i_ = 0;
  int line_ = 1, column_ = 1;
  bool stopped_ = false;  // toml++ fails at a lexical error before anything after it: stop looking
  char prev_ = '\n';        // the last character outside strings (a whole string counts as '"')
  bool expect_key_ = true;  // a key comes next (else a value)
  std::string open_;        // the brackets open outside strings, innermost last
  GuardedToml out_;
};

}  // namespace

int GuardedToml::original_column(int line, int column) const {
  int back = 0;
  for (const auto& s : shifts)
    if (s.line == line && column > s.column + back) back += s.delta;
  return column - back;
}

GuardedToml guard_toml(const std::string& text) { return Scanner(text).run(); }

}  // namespace gilhost
