#include "load/http_response.hpp"

#include <cctype>
#include <charconv>

#include "util/strings.hpp"

namespace gilhost::load {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// A decimal number of digits only (no sign, no spaces); false on anything else or overflow.
bool parse_size(std::string_view s, std::size_t& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

void ResponseParser::reset() {
  state_ = State::need_more;
  buffer_.clear();
  head_size_ = 0;
  content_length_ = 0;
  response_ = HttpResponse{};
  error_.clear();
}

ResponseParser::State ResponseParser::fail(std::string message) {
  error_ = std::move(message);
  return state_ = State::error;
}

ResponseParser::State ResponseParser::feed(std::string_view bytes) {
  if (state_ == State::error) return state_;
  if (state_ == State::complete) return bytes.empty() ? state_ : fail("bytes after a complete response");
  buffer_.append(bytes);
  if (head_size_ == 0) {
    // Search only where the new bytes could complete "\r\n\r\n" (a head may arrive split anywhere).
    const std::size_t from = buffer_.size() - bytes.size();
    const std::size_t end = buffer_.find("\r\n\r\n", from >= 3 ? from - 3 : 0);
    if (end == std::string::npos) {
      if (buffer_.size() > kMaxHead) return fail("response head longer than " + std::to_string(kMaxHead) + " bytes");
      return state_;
    }
    head_size_ = end + 4;
    if (head_size_ > kMaxHead) return fail("response head longer than " + std::to_string(kMaxHead) + " bytes");
    if (parse_head(std::string_view(buffer_).substr(0, end)) == State::error) return state_;
  }
  const std::size_t have = buffer_.size() - head_size_;
  if (have < content_length_) return state_;
  if (have > content_length_) return fail("bytes after a complete response");
  response_.body = buffer_.substr(head_size_);
  buffer_.clear();
  return state_ = State::complete;
}

ResponseParser::State ResponseParser::parse_head(std::string_view head) {
  const std::vector<std::string> lines = split(head, '\n');
  // Status line: "HTTP/1.1 200 OK" (the reason phrase may be empty).
  std::string_view status_line = lines[0];
  if (!status_line.empty() && status_line.back() == '\r') status_line.remove_suffix(1);
  if (!starts_with(status_line, "HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ' ||
      !(status_line.size() == 12 || status_line[12] == ' '))
    return fail("bad status line: " + std::string(status_line.substr(0, 80)));
  const bool http10 = status_line[7] == '0';
  if (!http10 && status_line[7] != '1') return fail("unsupported HTTP version: " + std::string(status_line.substr(0, 8)));
  std::size_t code = 0;
  if (!parse_size(status_line.substr(9, 3), code) || code < 100) return fail("bad status code: " + std::string(status_line.substr(0, 80)));
  response_.status = static_cast<int>(code);
  response_.keep_alive = !http10;

  bool have_length = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail("bad header line: " + std::string(line.substr(0, 80)));
    const std::string_view name = line.substr(0, colon);
    const std::string value = trim(line.substr(colon + 1));
    if (iequals(name, "content-length")) {
      std::size_t n = 0;
      if (!parse_size(value, n)) return fail("bad Content-Length: " + value);
      if (have_length && n != content_length_) return fail("conflicting Content-Length headers");
      if (n > kMaxBody) return fail("Content-Length " + value + " above " + std::to_string(kMaxBody));
      content_length_ = n;
      have_length = true;
    } else if (iequals(name, "transfer-encoding")) {
      return fail("Transfer-Encoding is not supported (responses are framed by Content-Length)");
    } else if (iequals(name, "connection")) {
      if (iequals(value, "close")) response_.keep_alive = false;
      else if (iequals(value, "keep-alive")) response_.keep_alive = true;
    }
  }
  if (!have_length) return fail("response without Content-Length");
  return state_;
}

}  // namespace gilhost::load
