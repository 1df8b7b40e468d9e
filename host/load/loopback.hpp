#pragma once
// The only addresses the load client may contact: 127.0.0.0/8 and ::1, given as literals (no name lookup,
// so nothing can resolve to another machine).
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

namespace gilhost::load {

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

// The loopback address `host` names ("localhost" means 127.0.0.1), or nullopt for anything else.
std::optional<Endpoint> loopback_address(const std::string& host);
// The same address with `port` set.
Endpoint with_port(Endpoint e, std::uint16_t port);

}  // namespace gilhost::load
