// The http_loops load client: its response parser, percentiles and loopback check, and the real
// gilhost-load binary against a small server on 127.0.0.1 in this process.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/http_response.hpp"
#include "load/loopback.hpp"
#include "load/percentile.hpp"
#include "util/fd.hpp"
#include "util/subprocess.hpp"

using gilhost::UniqueFd;
using gilhost::load::ResponseParser;
using State = gilhost::load::ResponseParser::State;
using nlohmann::json;

namespace {

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nloop0003";

}  // namespace

TEST_CASE("response parser: a whole response in one read", "[load]") {
  ResponseParser p;
  REQUIRE(p.feed(kOk) == State::complete);
  CHECK(p.response().status == 200);
  CHECK(p.response().body == "loop0003");
  CHECK(p.response().keep_alive);
}

TEST_CASE("response parser: the same response split at every byte boundary, and byte by byte", "[load]") {
  for (std::size_t cut = 0; cut <= kOk.size(); ++cut) {
    ResponseParser p;
    const State first = p.feed(std::string_view(kOk).substr(0, cut));
    CHECK(first == (cut == kOk.size() ? State::complete : State::need_more));
    REQUIRE(p.feed(std::string_view(kOk).substr(cut)) == State::complete);
    CHECK(p.response().body == "loop0003");
  }
  ResponseParser p;
  for (std::size_t i = 0; i + 1 < kOk.size(); ++i) REQUIRE(p.feed(kOk.substr(i, 1)) == State::need_more);
  REQUIRE(p.feed(kOk.substr(kOk.size() - 1)) == State::complete);
  CHECK(p.response().body == "loop0003");
}

TEST_CASE("response parser: reset reads the next response of a keep-alive connection", "[load]") {
  ResponseParser p;
  REQUIRE(p.feed(kOk) == State::complete);
  p.reset();
  REQUIRE(p.feed("HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\n") == State::need_more);
  REQUIRE(p.feed("abc") == State::complete);
  CHECK(p.response().status == 404);
  CHECK(p.response().body == "abc");
}

TEST_CASE("response parser: empty body, header names in any case, Connection and HTTP/1.0", "[load]") {
  ResponseParser p;
  REQUIRE(p.feed("HTTP/1.1 204 No Content\r\nCONTENT-LENGTH:0\r\nConnection: close\r\n\r\n") == State::complete);
  CHECK(p.response().status == 204);
  CHECK(p.response().body.empty());
  CHECK_FALSE(p.response().keep_alive);
  p.reset();
  REQUIRE(p.feed("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi") == State::complete);
  CHECK_FALSE(p.response().keep_alive);
  p.reset();
  REQUIRE(p.feed("HTTP/1.0 200\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi") == State::complete);
  CHECK(p.response().keep_alive);
}

TEST_CASE("response parser: bad responses are errors with a reason", "[load]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n", "status line"},
      {"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", "status line"},
      {"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n", "status code"},
      {"SSH-2.0-OpenSSH\r\n\r\n", "status line"},
      {"HTTP/1.1 200 OK\r\n\r\n", "without Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 8x\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "conflicting"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "above"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "Transfer-Encoding"},
      {"HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n", "header line"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabc", "after a complete response"},
  };
  for (const auto& [text, reason] : bad) {
    INFO(text);
    ResponseParser p;
    CHECK(p.feed(text) == State::error);
    CHECK(p.error().find(reason) != std::string::npos);
    CHECK(p.feed("more") == State::error);  // an error stays an error
  }
}

TEST_CASE("response parser: bytes after a complete response, and a head without end, are errors", "[load]") {
  ResponseParser p;
  REQUIRE(p.feed(kOk) == State::complete);
  CHECK(p.feed("H") == State::error);

  ResponseParser endless;
  const std::string chunk = "X-Filler: " + std::string(1000, 'a') + "\r\n";
  State s = endless.feed("HTTP/1.1 200 OK\r\n");
  for (int i = 0; i < 20 && s == State::need_more; ++i) s = endless.feed(chunk);
  CHECK(s == State::error);
  CHECK(endless.error().find("head longer") != std::string::npos);
}

TEST_CASE("percentiles: nearest rank on known samples", "[load]") {
  using gilhost::load::percentile_sorted;
  std::vector<std::int64_t> hundred(100);
  std::iota(hundred.begin(), hundred.end(), 1);  // 1..100
  CHECK(percentile_sorted(hundred, 50) == 50);
  CHECK(percentile_sorted(hundred, 95) == 95);
  CHECK(percentile_sorted(hundred, 99) == 99);
  CHECK(percentile_sorted(hundred, 100) == 100);
  CHECK(percentile_sorted(hundred, 1) == 1);

  std::vector<std::int64_t> two_hundred(200);
  std::iota(two_hundred.begin(), two_hundred.end(), 1);
  CHECK(percentile_sorted(two_hundred, 95) == 190);  // 0.95 * 200 is 190.00000000000003 in floating point
  CHECK(percentile_sorted({1, 3, 7}, 50) == 3);      // ceil(1.5) = 2nd of 3
  CHECK(percentile_sorted({1, 3, 7}, 1) == 1);
  CHECK(percentile_sorted({42}, 99) == 42);
  CHECK_FALSE(percentile_sorted({}, 50).has_value());
  CHECK_THROWS_AS(percentile_sorted({1}, 0), std::invalid_argument);
  CHECK_THROWS_AS(percentile_sorted({1}, 101), std::invalid_argument);
}

TEST_CASE("percentiles: the latency summary of a round", "[load]") {
  std::vector<std::int64_t> ns;
  for (int i = 1000; i >= 1; --i) ns.push_back(i * 1000);  // in any order of arrival
  const auto s = gilhost::load::summarize(ns);
  CHECK(s.count == 1000);
  CHECK(s.p50 == 500000);
  CHECK(s.p95 == 950000);
  CHECK(s.p99 == 990000);
  CHECK(s.max == 1000000);
  const auto none = gilhost::load::summarize({});
  CHECK(none.count == 0);
  CHECK_FALSE(none.p50.has_value());
  CHECK_FALSE(none.max.has_value());
}

TEST_CASE("loopback check: only 127.0.0.0/8 and ::1", "[load]") {
  using gilhost::load::loopback_address;
  for (const char* ok : {"127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "localhost", "0:0:0:0:0:0:0:1"}) {
    INFO(ok);
    CHECK(loopback_address(ok).has_value());
  }
  for (const char* refused : {"10.0.0.1", "0.0.0.0", "128.0.0.1", "126.255.255.255", "192.168.1.1", "::",
                              "::ffff:127.0.0.1", "::ffff:10.0.0.1", "fe80::1", "example.com", "localhost.", "",
                              "127.1", "127.0.0.1 ", "2130706433"}) {
    INFO(refused);
    CHECK_FALSE(loopback_address(refused).has_value());
  }
  const auto v4 = gilhost::load::with_port(*loopback_address("127.0.0.3"), 8080);
  sockaddr_in sin{};
  std::memcpy(&sin, &v4.addr, sizeof sin);
  CHECK(sin.sin_family == AF_INET);
  CHECK(ntohs(sin.sin_port) == 8080);
  CHECK(ntohl(sin.sin_addr.s_addr) == 0x7f000003u);
  const auto v6 = gilhost::load::with_port(*loopback_address("::1"), 443);
  sockaddr_in6 sin6{};
  std::memcpy(&sin6, &v6.addr, sizeof sin6);
  CHECK(sin6.sin6_family == AF_INET6);
  CHECK(ntohs(sin6.sin6_port) == 443);
  CHECK(v6.len == sizeof(sockaddr_in6));
}

// ---- gilhost-load against a server on 127.0.0.1 -------------------------------------------------------

namespace {

const std::string kLoadBinary = GILHOST_LOAD_BINARY;

// A small HTTP/1.1 keep-alive server in a thread: one listening socket per "loop", each answering
// "loop%04d" with its index. `Answer` picks well-formed responses or a broken one.
class TestServer {
 public:
  enum class Answer { ok, no_length, never };

  TestServer(int loops, Answer answer) : answer_(answer), served_(static_cast<std::size_t>(loops), 0) {
    for (int k = 0; k < loops; ++k) {
      UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof a;
      REQUIRE(::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
      REQUIRE(::listen(s.get(), 128) == 0);
      REQUIRE(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) == 0);
      ports_.push_back(ntohs(a.sin_port));
      listeners_.push_back(std::move(s));
    }
    thread_ = std::thread([this] { serve(); });
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;
  ~TestServer() { stop(); }

  void stop() {
    if (!thread_.joinable()) return;
    gilhost::write_all(wake_.write.get(), "x");
    thread_.join();
  }
  const std::vector<std::uint16_t>& ports() const { return ports_; }
  // Responses per loop; read after stop().
  const std::vector<int>& served() const { return served_; }

 private:
  struct Client {
    UniqueFd fd;
    int loop = 0;
    std::string in;
  };

  void serve() {
    std::vector<Client> clients;
    for (;;) {
      std::vector<pollfd> fds{{wake_.read.get(), POLLIN, 0}};
      for (const auto& l : listeners_) fds.push_back({l.get(), POLLIN, 0});
      for (const auto& c : clients) fds.push_back({c.fd.get(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 10000) <= 0 || fds[0].revents) return;  // told to stop, or idle
      for (std::size_t k = 0; k < listeners_.size(); ++k)
        if (fds[1 + k].revents & POLLIN) {
          UniqueFd fd(::accept4(listeners_[k].get(), nullptr, nullptr, SOCK_CLOEXEC));
          // Without it, the body written apart from the head waits for a delayed ACK (40 ms).
          const int one = 1;
          ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients.push_back({std::move(fd), static_cast<int>(k), {}});
        }
      for (std::size_t i = 0; i < clients.size() && 1 + listeners_.size() + i < fds.size(); ++i) {
        if (!fds[1 + listeners_.size() + i].revents) continue;
        if (!read_and_answer(clients[i])) clients[i].fd.reset();
      }
      clients.erase(std::remove_if(clients.begin(), clients.end(), [](const Client& c) { return !c.fd; }), clients.end());
    }
  }

  // MSG_NOSIGNAL: a client that has gone makes an error here, not a SIGPIPE for the test process.
  static bool send_all(int fd, std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // False when the connection is over.
  bool read_and_answer(Client& c) {
    char buf[4096];
    const ssize_t n = ::read(c.fd.get(), buf, sizeof buf);
    if (n <= 0) return false;
    c.in.append(buf, static_cast<std::size_t>(n));
    for (std::size_t end; (end = c.in.find("\r\n\r\n")) != std::string::npos;) {
      c.in.erase(0, end + 4);
      if (answer_ == Answer::never) continue;
      char body[16];
      std::snprintf(body, sizeof body, "loop%04d", c.loop);
      const std::string head = answer_ == Answer::ok ? "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n"
                                                      : "HTTP/1.1 200 OK\r\n\r\n";
      // Head and body in two writes: the client may well see them in two reads.
      if (!send_all(c.fd.get(), head) || !send_all(c.fd.get(), body)) return false;
      ++served_[static_cast<std::size_t>(c.loop)];
    }
    return true;
  }

  Answer answer_;
  std::vector<UniqueFd> listeners_;
  std::vector<std::uint16_t> ports_;
  std::vector<int> served_;
  gilhost::Pipe wake_ = gilhost::make_pipe();
  std::thread thread_;
};

std::vector<std::string> load_argv(const std::vector<std::uint16_t>& ports, int connections, int requests,
                                   double timeout_s = 30) {
  std::vector<std::string> argv = {kLoadBinary, "--connections", std::to_string(connections), "--requests",
                                   std::to_string(requests), "--timeout", std::to_string(timeout_s)};
  for (auto p : ports) {
    argv.push_back("--port");
    argv.push_back(std::to_string(p));
  }
  return argv;
}

json run_load_json(const std::vector<std::string>& argv) {
  const auto c = gilhost::run_capture(argv, 60);
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  const json j = json::parse(c.out, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

}  // namespace

TEST_CASE("gilhost-load: every request answered, counted per loop as the server counted them", "[load]") {
  TestServer server(3, TestServer::Answer::ok);
  const json r = run_load_json(load_argv(server.ports(), 8, 300));
  server.stop();
  INFO(r.dump());
  CHECK(r["client"] == "gilhost-load");
  CHECK(r["requests"] == 300);
  CHECK(r["sent"] == 300);
  CHECK(r["responses"] == 300);
  CHECK(r["ok"] == 300);
  CHECK(r["connected"] == 8);
  CHECK(r["error_count"] == 0);
  CHECK(r["timed_out"] == false);
  // Round-robin over three ports: every loop got connections, and the bodies agree with the server.
  std::map<std::string, int> expected;
  for (std::size_t k = 0; k < server.served().size(); ++k) {
    char id[24];
    std::snprintf(id, sizeof id, "%04zu", k);
    CHECK(server.served()[k] > 0);
    expected[id] = server.served()[k];
  }
  CHECK(r["per_loop"].get<std::map<std::string, int>>() == expected);
  CHECK(r["p50_ms"].get<double>() <= r["p95_ms"].get<double>());
  CHECK(r["p95_ms"].get<double>() <= r["p99_ms"].get<double>());
  CHECK(r["p99_ms"].get<double>() <= r["max_ms"].get<double>());
  CHECK(r["rps"].get<double>() > 0);
  CHECK(r["cpu_s"].get<double>() >= 0);
  CHECK(r["cpu_s"].get<double>() == Approx(r["cpu_user_s"].get<double>() + r["cpu_system_s"].get<double>()).margin(1e-5));
}

TEST_CASE("gilhost-load: fewer requests than connections, and none at all", "[load]") {
  TestServer server(1, TestServer::Answer::ok);
  const json few = run_load_json(load_argv(server.ports(), 16, 5));
  CHECK(few["ok"] == 5);
  CHECK(few["per_loop"]["0000"] == 5);
  const json none = run_load_json(load_argv(server.ports(), 4, 0));
  CHECK(none["sent"] == 0);
  CHECK(none["responses"] == 0);
  CHECK(none["p50_ms"].is_null());
  CHECK(none["error_count"] == 0);
}

TEST_CASE("gilhost-load: a response without Content-Length is an error on its connection", "[load]") {
  TestServer server(1, TestServer::Answer::no_length);
  const json r = run_load_json(load_argv(server.ports(), 4, 40));
  CHECK(r["ok"] == 0);
  CHECK(r["error_count"] == 4);  // each connection fails once, then is closed
  CHECK(r["errors"][0].get<std::string>().find("Content-Length") != std::string::npos);
}

TEST_CASE("gilhost-load: a server that never answers ends at the time bound", "[load]") {
  TestServer server(1, TestServer::Answer::never);
  const json r = run_load_json(load_argv(server.ports(), 2, 10, 0.3));
  CHECK(r["timed_out"] == true);
  CHECK(r["responses"] == 0);
  CHECK(r["sent"] == 2);
}

TEST_CASE("gilhost-load: a refused connection is counted, not fatal", "[load]") {
  std::uint16_t closed_port = 0;
  {
    TestServer gone(1, TestServer::Answer::ok);
    closed_port = gone.ports()[0];
  }  // its listening socket is closed: connecting is refused
  const json r = run_load_json(load_argv({closed_port}, 3, 10));
  CHECK(r["connected"] == 0);
  CHECK(r["error_count"] == 3);
  CHECK(r["responses"] == 0);
}

TEST_CASE("gilhost-load: refuses any address but loopback, before contacting anything", "[load]") {
  for (const char* host : {"10.0.0.1", "192.0.2.1", "example.com", "::ffff:192.0.2.1"}) {
    INFO(host);
    auto argv = load_argv({80}, 1, 1);
    argv.insert(argv.end(), {"--host", host});
    const auto c = gilhost::run_capture(argv, 30);
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK(c.err.find("only loopback") != std::string::npos);
  }
  const auto missing_port = gilhost::run_capture({kLoadBinary, "--requests", "1"}, 30);
  CHECK(missing_port.exit_code == 2);
}
