#pragma once
// Incremental parser of one HTTP/1.x response framed by Content-Length, fed as bytes arrive.
#include <cstddef>
#include <string>
#include <string_view>

namespace gilhost::load {

struct HttpResponse {
  int status = 0;
  bool keep_alive = true;  // false after "Connection: close" (or HTTP/1.0 without keep-alive)
  std::string body;
};

class ResponseParser {
 public:
  enum class State { need_more, complete, error };

  // Bounds that keep a broken server from growing the buffer without end.
  static constexpr std::size_t kMaxHead = 16 * 1024;
  static constexpr std::size_t kMaxBody = 1024 * 1024;

  // Appends the bytes and returns the state after them. One request is in flight per connection, so
  // bytes beyond a complete response are an error, not the start of the next one.
  State feed(std::string_view bytes);
  State state() const { return state_; }
  const HttpResponse& response() const { return response_; }
  const std::string& error() const { return error_; }
  // Ready for the next response on the same connection.
  void reset();

 private:
  State fail(std::string message);
  State parse_head(std::string_view head);

  State state_ = State::need_more;
  std::string buffer_;
  std::size_t head_size_ = 0;  // bytes of the head including its blank line; 0 until it is complete
  std::size_t content_length_ = 0;
  HttpResponse response_;
  std::string error_;
};

}  // namespace gilhost::load
