#pragma once
// The load itself: keep-alive HTTP/1.1 GETs over N connections, one thread, epoll, one request in flight
// per connection, a bounded request count and a hard time bound.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "load/loopback.hpp"
#include "load/percentile.hpp"

namespace gilhost::load {

struct LoadOptions {
  Endpoint address;                  // a loopback address (loopback_address); ports come from `ports`
  std::string host_header = "127.0.0.1";
  std::vector<std::uint16_t> ports;  // connections are spread round-robin over them
  int connections = 64;
  std::int64_t requests = 1000;      // in total, over all connections
  double timeout_s = 60.0;           // the whole run, connecting included
};

struct LoadReport {
  std::int64_t requests = 0;
  std::int64_t sent = 0;
  std::int64_t responses = 0;  // complete responses, any status
  std::int64_t ok = 0;         // status 200
  int connections = 0;
  int connected = 0;
  double elapsed_s = 0;        // the request phase: after every connection is made, until the last response
  LatencySummary latency;      // request written to response complete, every complete response
  std::map<std::string, std::int64_t> per_loop;  // ok responses by body: "loop0003" counts under "0003"
  std::int64_t error_count = 0;
  std::vector<std::string> errors;  // the first few, to diagnose
  bool timed_out = false;

  double rps() const { return elapsed_s > 0 ? static_cast<double>(responses) / elapsed_s : 0.0; }
};

// Runs the load; throws std::system_error only when epoll itself cannot be set up (connection
// failures are counted in the report).
LoadReport run_load(const LoadOptions& options);

}  // namespace gilhost::load
