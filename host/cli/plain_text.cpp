#include "cli/plain_text.hpp"

#include <langinfo.h>

#include <clocale>
#include <cstring>
#include <iostream>
#include <streambuf>

#include "util/strings.hpp"

namespace gilhost {

namespace {

// The stand-in of one code point outside ASCII.
const char* stand_in(char32_t c) {
  switch (c) {
    case U'✓': return "ok";
    case U'✗': return "FAIL";
    case U'·': case U'—': case U'–': case U'−': return "-";
    case U'±': return "+-";
    case U'×': return "x";
    case U'…': return "...";
    case U'µ': case U'μ': return "u";
    case U'≈': return "~";
    case U'→': return "->";
    case U'←': return "<-";
    case U'≥': return ">=";
    case U'≤': return "<=";
    case U'‘': case U'’': return "'";
    case U'“': case U'”': return "\"";
    case U'│': case U'┃': return "|";
    case U'█': case U'▇': case U'▆': case U'▅': return "#";
    case U'▁': case U'▂': case U'▃': case U'▄': return ".";
    case U'\u00a0': return " ";
    default: break;
  }
  if (c >= 0x2500 && c <= 0x257F) return "-";  // box drawing
  return "?";
}

int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 0;  // a continuation byte or an invalid one
}

char32_t decode(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[i])); };
  if (s.size() == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (s.size() == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

// Converts what passes through it; a character split between two writes waits for its last bytes.
class AsciiBuf : public std::streambuf {
 public:
  AsciiBuf(std::streambuf* to, bool ascii) : to_(to), ascii_(ascii) {}
  ~AsciiBuf() override {
    if (!pending_.empty()) put(pending_);  // a sequence never finished: shown escaped
    sync();
  }

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    const char c = traits_type::to_char_type(ch);
    return xsputn(&c, 1) == 1 ? ch : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<std::size_t>(n));
    std::size_t whole = pending_.size();  // a cut sequence at the end stays pending
    for (std::size_t back = 1; back <= 3 && back <= pending_.size(); ++back) {
      const int len = sequence_length(static_cast<unsigned char>(pending_[pending_.size() - back]));
      if (len == 0) continue;
      if (static_cast<std::size_t>(len) > back) whole = pending_.size() - back;
      break;
    }
    const std::string now = pending_.substr(0, whole);
    pending_.erase(0, whole);
    put(now);
    return n;
  }
  int sync() override { return to_->pubsync(); }

 public:
  void keep_utf8() { ascii_ = false; }

 private:
  void put(std::string_view text) {
    const std::string out = escape_controls(ascii_ ? to_ascii(text) : std::string(text));
    to_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
  }
  std::streambuf* to_;
  bool ascii_;
  std::string pending_;
};

}  // namespace

bool locale_is_utf8() {
  std::setlocale(LC_CTYPE, "");
  const char* codeset = ::nl_langinfo(CODESET);
  return codeset && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

std::string to_ascii(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const int len = sequence_length(static_cast<unsigned char>(text[i]));
    if (len == 1) {
      out += text[i++];
    } else if (len == 0 || i + static_cast<std::size_t>(len) > text.size()) {
      out += '?';
      ++i;
    } else {
      out += stand_in(decode(text.substr(i, static_cast<std::size_t>(len))));
      i += static_cast<std::size_t>(len);
    }
  }
  return out;
}

struct AsciiTerminal::Filters {
  explicit Filters(bool ascii) : out(std::cout.rdbuf(), ascii), err(std::cerr.rdbuf(), ascii) {}
  AsciiBuf out;
  AsciiBuf err;
  std::streambuf* old_out = std::cout.rdbuf(&out);
  std::streambuf* old_err = std::cerr.rdbuf(&err);
};

AsciiTerminal::AsciiTerminal(bool ascii) : filters_(std::make_unique<Filters>(ascii)) {}

void AsciiTerminal::keep_utf8() {
  filters_->out.keep_utf8();
  filters_->err.keep_utf8();
}

AsciiTerminal::~AsciiTerminal() {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(filters_->old_out);
  std::cerr.rdbuf(filters_->old_err);
}

}  // namespace gilhost
