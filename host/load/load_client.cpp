#include "load/load_client.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "load/http_response.hpp"
#include "util/clock.hpp"
#include "util/fd.hpp"

namespace gilhost::load {

namespace {

constexpr std::size_t kErrorSamples = 5;

// idle: connected, no request yet (they all start together once every connection is made).
enum class Phase { connecting, idle, sending, waiting, closed };

struct Connection {
  UniqueFd fd;
  std::uint16_t port = 0;
  Phase phase = Phase::closed;
  std::string out;  // the request being written
  std::size_t written = 0;
  std::int64_t sent_ns = 0;
  ResponseParser parser;
};

class Load {
 public:
  explicit Load(const LoadOptions& o)
      : o_(o), epoll_(::epoll_create1(EPOLL_CLOEXEC)), deadline_ns_(monotonic_ns() + to_ns(o.timeout_s)) {
    if (!epoll_) throw std::system_error(errno, std::generic_category(), "epoll_create1");
    report_.requests = o.requests;
    report_.connections = o.connections;
    conns_.resize(static_cast<std::size_t>(std::max(0, o.connections)));
  }

  LoadReport run() {
    for (std::size_t j = 0; j < conns_.size(); ++j) open(j, o_.ports[j % o_.ports.size()]);
    // Connect everything first: the clock measures the request phase only.
    while (count(Phase::connecting) > 0 && wait_events()) {
    }
    report_.connected = static_cast<int>(count(Phase::idle));
    const std::int64_t t_start = monotonic_ns();
    if (!report_.timed_out)
      for (std::size_t j = 0; j < conns_.size(); ++j)
        if (conns_[j].phase == Phase::idle) next_request(j);
    while (count(Phase::sending) + count(Phase::waiting) > 0 && wait_events()) {
    }
    report_.elapsed_s = static_cast<double>(std::max<std::int64_t>(monotonic_ns() - t_start, 1)) / 1e9;
    report_.latency = summarize(std::move(latencies_));
    return std::move(report_);
  }

 private:
  static std::int64_t to_ns(double s) { return static_cast<std::int64_t>(s * 1e9); }

  std::size_t count(Phase p) const {
    return static_cast<std::size_t>(std::count_if(conns_.begin(), conns_.end(), [p](const Connection& c) { return c.phase == p; }));
  }

  void error(std::string what) {
    ++report_.error_count;
    if (report_.errors.size() < kErrorSamples) report_.errors.push_back(std::move(what));
  }

  void close(std::size_t j) {
    conns_[j].phase = Phase::closed;
    conns_[j].fd.reset();  // closing also removes it from the epoll set
  }

  void fail(std::size_t j, const std::string& what) {
    error("port " + std::to_string(conns_[j].port) + ": " + what);
    close(j);
  }

  // A non-blocking connect; edge-triggered for both directions, so the set never changes afterwards.
  void open(std::size_t j, std::uint16_t port) {
    Connection& c = conns_[j];
    c.port = port;
    const Endpoint e = with_port(o_.address, port);
    c.fd = UniqueFd(::socket(e.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!c.fd) return fail(j, std::string("socket: ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(c.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as asyncio does
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = j;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c.fd.get(), &ev) != 0)
      return fail(j, std::string("epoll_ctl: ") + std::strerror(errno));
    c.phase = Phase::connecting;
    if (::connect(c.fd.get(), reinterpret_cast<const sockaddr*>(&e.addr), e.len) == 0) c.phase = Phase::idle;
    else if (errno != EINPROGRESS) fail(j, std::string("connect: ") + std::strerror(errno));
  }

  // Waits for events until the deadline; false once it has passed.
  bool wait_events() {
    const std::int64_t left_ns = deadline_ns_ - monotonic_ns();
    if (left_ns <= 0) {
      report_.timed_out = true;
      return false;
    }
    epoll_event events[256];
    const int n = ::epoll_wait(epoll_.get(), events, 256, static_cast<int>((left_ns + 999999) / 1000000));
    if (n < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "epoll_wait");
    for (int i = 0; i < n; ++i) on_event(static_cast<std::size_t>(events[i].data.u64), events[i].events);
    return true;
  }

  void on_event(std::size_t j, std::uint32_t events) {
    Connection& c = conns_[j];
    if (c.phase == Phase::connecting) {
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) return fail(j, std::string("connect: ") + std::strerror(err));
      if (events & EPOLLOUT) c.phase = Phase::idle;
      return;
    }
    if (c.phase == Phase::sending && (events & EPOLLOUT)) flush(j);
    if (c.phase != Phase::closed && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) drain(j);
  }

  void next_request(std::size_t j) {
    if (report_.sent >= o_.requests) return close(j);
    Connection& c = conns_[j];
    c.out = "GET /r/" + std::to_string(report_.sent) + " HTTP/1.1\r\nHost: " + o_.host_header +
            "\r\nConnection: keep-alive\r\n\r\n";
    ++report_.sent;
    c.written = 0;
    c.parser.reset();
    c.phase = Phase::sending;
    c.sent_ns = monotonic_ns();
    flush(j);
  }

  void flush(std::size_t j) {
    Connection& c = conns_[j];
    while (c.written < c.out.size()) {
      const ssize_t n = ::send(c.fd.get(), c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;  // the next EPOLLOUT edge goes on
        return fail(j, std::string("send: ") + std::strerror(errno));
      }
      c.written += static_cast<std::size_t>(n);
    }
    c.phase = Phase::waiting;
  }

  // Reads until the socket is empty (edge-triggered) and feeds the parser.
  void drain(std::size_t j) {
    Connection& c = conns_[j];
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        return fail(j, std::string("recv: ") + std::strerror(errno));
      }
      if (n == 0) {
        const bool mid_response = c.phase == Phase::waiting || c.phase == Phase::sending;
        return mid_response ? fail(j, "connection closed before the response") : close(j);
      }
      if (c.phase == Phase::idle) return fail(j, "bytes before any request");
      switch (c.parser.feed(std::string_view(buf, static_cast<std::size_t>(n)))) {
        case ResponseParser::State::need_more:
          break;
        case ResponseParser::State::error:
          return fail(j, c.parser.error());
        case ResponseParser::State::complete:
          complete(j);
          if (c.phase == Phase::closed) return;
          break;
      }
    }
  }

  void complete(std::size_t j) {
    Connection& c = conns_[j];
    latencies_.push_back(monotonic_ns() - c.sent_ns);
    ++report_.responses;
    const HttpResponse& r = c.parser.response();
    if (r.status == 200) {
      ++report_.ok;
      const bool named = r.body.compare(0, 4, "loop") == 0;
      ++report_.per_loop[named ? r.body.substr(4) : "?"];
    } else {
      error("port " + std::to_string(c.port) + ": status " + std::to_string(r.status));
    }
    if (!r.keep_alive) return close(j);  // the server ends this connection; the others take the rest
    next_request(j);
  }

  const LoadOptions& o_;
  UniqueFd epoll_;
  std::int64_t deadline_ns_;
  std::vector<Connection> conns_;
  std::vector<std::int64_t> latencies_;
  LoadReport report_;
};

}  // namespace

LoadReport run_load(const LoadOptions& options) {
  if (options.ports.empty()) throw std::invalid_argument("run_load: no ports");
  return Load(options).run();
}

}  // namespace gilhost::load
