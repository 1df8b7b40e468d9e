#include "load/loopback.hpp"

#include <arpa/inet.h>

#include <cstddef>
#include <cstring>

namespace gilhost::load {

std::optional<Endpoint> loopback_address(const std::string& host) {
  const std::string literal = host == "localhost" ? "127.0.0.1" : host;
  Endpoint e;
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, literal.c_str(), &v4) == 1) {
    if ((ntohl(v4.s_addr) >> 24) != 127) return std::nullopt;
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr = v4;
    std::memcpy(&e.addr, &sin, sizeof sin);
    e.len = sizeof sin;
    return e;
  }
  if (::inet_pton(AF_INET6, literal.c_str(), &v6) == 1) {
    // Only ::1 itself: an IPv4-mapped address (::ffff:a.b.c.d) could name any machine.
    if (!IN6_IS_ADDR_LOOPBACK(&v6)) return std::nullopt;
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_addr = v6;
    std::memcpy(&e.addr, &sin6, sizeof sin6);
    e.len = sizeof sin6;
    return e;
  }
  return std::nullopt;
}

Endpoint with_port(Endpoint e, std::uint16_t port) {
  const std::uint16_t net = htons(port);
  // Copied into place: the storage is not a sockaddr_in object, so no casts to write through.
  if (e.addr.ss_family == AF_INET)
    std::memcpy(reinterpret_cast<char*>(&e.addr) + offsetof(sockaddr_in, sin_port), &net, sizeof net);
  else
    std::memcpy(reinterpret_cast<char*>(&e.addr) + offsetof(sockaddr_in6, sin6_port), &net, sizeof net);
  return e;
}

}  // namespace gilhost::load
