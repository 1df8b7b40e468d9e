#include "load/loopback.hpp"

#include <arpa/inet.h>

#include <cstddef>
#include <cstring>

namespace gilhost::load {

namespace {

template <typename SockAddr>
Endpoint endpoint_of(const SockAddr& sa) {
  Endpoint e;
  std::memcpy(&e.addr, &sa, sizeof sa);
  e.len = sizeof sa;
  return e;
}

}  // namespace

std::optional<Endpoint> loopback_address(const std::string& host) {
  const std::string literal = host == "localhost" ? "127.0.0.1" : host;
  sockaddr_in v4{};
  sockaddr_in6 v6{};
  if (::inet_pton(AF_INET, literal.c_str(), &v4.sin_addr) == 1) {
    if ((ntohl(v4.sin_addr.s_addr) >> 24) != 127) return std::nullopt;
    v4.sin_family = AF_INET;
    return endpoint_of(v4);
  }
  if (::inet_pton(AF_INET6, literal.c_str(), &v6.sin6_addr) == 1) {
    // Only ::1 itself: an IPv4-mapped address (::ffff:a.b.c.d) could name any machine.
    if (!IN6_IS_ADDR_LOOPBACK(&v6.sin6_addr)) return std::nullopt;
    v6.sin6_family = AF_INET6;
    return endpoint_of(v6);
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
