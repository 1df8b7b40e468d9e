#include "util/json_reader.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "util/json_depth.hpp"
#include "util/strings.hpp"

namespace gilhost {

const JsonNode* JsonNode::find(std::string_view key) const {
  for (auto it = members.rbegin(); it != members.rend(); ++it)
    if (it->first == key) return &it->second;
  return nullptr;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::optional<JsonNode> document(std::string& error) {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") at_ = 3;  // a UTF-8 byte order mark, skipped as nlohmann does
    JsonNode out;
    if (value(out, 0)) {
      skip_space();
      if (at_ == s_.size()) return out;
      fail("text after the value");
    }
    error = error_ + " at byte " + std::to_string(at_);
    return std::nullopt;
  }

 private:
  bool fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool word(std::string_view w) {
    if (s_.substr(at_, w.size()) != w) return fail("an unknown word");
    at_ += w.size();
    return true;
  }

  bool value(JsonNode& out, int depth) {
    skip_space();
    if (at_ >= s_.size()) return fail("the text ends where a value should be");
    switch (s_[at_]) {
      case '{': return depth < kMaxJsonDepth ? object(out, depth + 1) : fail("nested too deep");
      case '[': return depth < kMaxJsonDepth ? array(out, depth + 1) : fail("nested too deep");
      case '"': out.kind = JsonNode::Kind::string; return string(out.text);
      case 't': out.kind = JsonNode::Kind::boolean; out.boolean = true; return word("true");
      case 'f': out.kind = JsonNode::Kind::boolean; return word("false");
      case 'n': return word("null");
      default: return number(out);
    }
  }

  bool object(JsonNode& out, int depth) {
    out.kind = JsonNode::Kind::object;
    ++at_;
    skip_space();
    if (at_ < s_.size() && s_[at_] == '}') return ++at_, true;
    for (;;) {
      skip_space();
      std::string key;
      if (at_ >= s_.size()) return fail("the text ends inside an object");
      if (s_[at_] != '"') return fail("an object's key is not a string");
      if (!string(key)) return false;
      skip_space();
      if (at_ >= s_.size() || s_[at_] != ':') return fail("no ':' after an object's key");
      ++at_;
      out.members.emplace_back(std::move(key), JsonNode{});
      if (!value(out.members.back().second, depth)) return false;
      if (!next_or_end('}')) return false;
      if (s_[at_ - 1] == '}') return true;
    }
  }

  bool array(JsonNode& out, int depth) {
    out.kind = JsonNode::Kind::array;
    ++at_;
    skip_space();
    if (at_ < s_.size() && s_[at_] == ']') return ++at_, true;
    for (;;) {
      out.items.emplace_back();
      if (!value(out.items.back(), depth)) return false;
      if (!next_or_end(']')) return false;
      if (s_[at_ - 1] == ']') return true;
    }
  }

  // After a member or an item: ',' (more follow) or `close`, consumed.
  bool next_or_end(char close) {
    skip_space();
    if (at_ < s_.size() && (s_[at_] == ',' || s_[at_] == close)) return ++at_, true;
    return fail(close == '}' ? "no ',' or '}' after an object's member" : "no ',' or ']' after an array's item");
  }

  bool hex4(unsigned& out) {
    if (at_ + 4 > s_.size()) return fail("a \\u escape cut short");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[at_++];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return fail("a \\u escape with a character that is not hex");
      out = out * 16 + static_cast<unsigned>(d);
    }
    return true;
  }

  // A \uXXXX escape (at_ past the 'u'), a surrogate pair as one code point, as UTF-8.
  bool unicode_escape(std::string& out) {
    unsigned cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("a lone low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      unsigned lo = 0;
      if (s_.substr(at_, 2) != "\\u") return fail("a high surrogate without its low one");
      at_ += 2;
      if (!hex4(lo)) return false;
      if (lo < 0xDC00 || lo > 0xDFFF) return fail("a high surrogate without its low one");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    out += utf8_encode(static_cast<char32_t>(cp));
    return true;
  }

  bool string(std::string& out) {
    ++at_;  // the opening quote
    const std::size_t start = at_;
    for (;;) {
      if (at_ >= s_.size()) return fail("a string without its closing quote");
      const char c = s_[at_];
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character in a string");
      if (c != '\\') {
        out += c;
        ++at_;
        continue;
      }
      if (++at_ >= s_.size()) return fail("a string without its closing quote");
      const char e = s_[at_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': if (!unicode_escape(out)) return false; break;
        default: return fail("an unknown escape in a string");
      }
    }
    if (!is_valid_utf8(s_.substr(start, at_ - start))) return fail("a string that is not UTF-8");
    ++at_;  // the closing quote
    return true;
  }

  bool digits() {
    const std::size_t from = at_;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
    return at_ > from;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number(JsonNode& out) {
    const std::size_t start = at_;
    if (s_[at_] == '-') ++at_;
    if (at_ < s_.size() && s_[at_] == '0') {
      ++at_;
    } else if (!digits()) {
      return fail("not a value");
    }
    bool integral = true;
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      integral = false;
      if (!digits()) return fail("a number with no digit after its '.'");
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      integral = false;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (!digits()) return fail("a number with no digit in its exponent");
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + at_;
    if (integral) {
      if (*first == '-') {
        out.kind = JsonNode::Kind::integer;
        if (std::from_chars(first, last, out.integer).ec == std::errc()) return true;
      } else {
        out.kind = JsonNode::Kind::unsigned_integer;
        if (std::from_chars(first, last, out.unsigned_integer).ec == std::errc()) return true;
      }
    }
    // A fraction, an exponent, or an integer beyond 64 bits: a double, as strtod reads it (the runner's
    // LC_NUMERIC is "C" when it reads its spec), finite or an error.
    out.kind = JsonNode::Kind::real;
    out.real = std::strtod(std::string(first, last).c_str(), nullptr);
    return std::isfinite(out.real) ? true : fail("a number beyond the doubles' range");
  }

  std::string_view s_;
  std::size_t at_ = 0;
  std::string error_;
};

}  // namespace

std::optional<JsonNode> read_json(std::string_view text, std::string& error) { return Reader(text).document(error); }

nlohmann::json to_nlohmann(const JsonNode& node) {
  switch (node.kind) {
    case JsonNode::Kind::null: return nullptr;
    case JsonNode::Kind::boolean: return node.boolean;
    case JsonNode::Kind::integer: return node.integer;
    case JsonNode::Kind::unsigned_integer: return node.unsigned_integer;
    case JsonNode::Kind::real: return node.real;
    case JsonNode::Kind::string: return node.text;
    case JsonNode::Kind::array: {
      nlohmann::json out = nlohmann::json::array();
      for (const JsonNode& item : node.items) out.push_back(to_nlohmann(item));
      return out;
    }
    case JsonNode::Kind::object: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, item] : node.members) out[key] = to_nlohmann(item);  // the last of a repeated key
      return out;
    }
  }
  return nullptr;
}

}  // namespace gilhost
