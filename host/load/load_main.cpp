// gilhost-load: the HTTP load client of the http_loops experiment (scripts/http_loops.py). One thread, so
// on a small machine it leaves the cores to the server it measures; prints one JSON line, the same fields
// as scripts/http_load.py plus ok, client and its own CPU seconds.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "load/load_client.hpp"

namespace {

using gilhost::load::LatencySummary;
using gilhost::load::LoadReport;
using nlohmann::json;

double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

// Milliseconds rounded to µs, or null without samples (as http_load.py prints them).
json ms(const std::optional<std::int64_t>& ns) {
  return ns ? json(rounded(static_cast<double>(*ns) / 1e6, 3)) : json(nullptr);
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

json to_json(const LoadReport& r) {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  const double user = seconds(ru.ru_utime), sys = seconds(ru.ru_stime);
  const LatencySummary& l = r.latency;
  return {{"client", "gilhost-load"},
          {"requests", r.requests},
          {"sent", r.sent},
          {"responses", r.responses},
          {"ok", r.ok},
          {"connections", r.connections},
          {"connected", r.connected},
          {"elapsed_s", rounded(r.elapsed_s, 6)},
          {"rps", rounded(r.rps(), 1)},
          {"p50_ms", ms(l.p50)},
          {"p95_ms", ms(l.p95)},
          {"p99_ms", ms(l.p99)},
          {"max_ms", ms(l.max)},
          {"per_loop", r.per_loop},
          {"error_count", r.error_count},
          {"errors", r.errors},
          {"timed_out", r.timed_out},
          {"cpu_user_s", rounded(user, 6)},
          {"cpu_system_s", rounded(sys, 6)},
          {"cpu_s", rounded(user + sys, 6)}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gilhost-load: keep-alive HTTP/1.1 GET load against a loopback server; prints one JSON line"};
  std::string host = "127.0.0.1";
  std::vector<std::uint16_t> ports;
  int connections = 64;
  std::int64_t requests = 1000;
  double timeout_s = 60.0;
  app.add_option("--host", host, "Server address: 127.0.0.0/8, ::1 or localhost (nothing else is contacted)")
      ->capture_default_str();
  app.add_option("--port", ports, "Server port; repeat it to spread connections round-robin over several")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("--connections", connections, "Keep-alive connections")->capture_default_str()->check(CLI::Range(1, 10000));
  app.add_option("--requests", requests, "Requests in total, over all connections")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{10000000}));
  app.add_option("--timeout", timeout_s, "Hard bound on the whole run, seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  gilhost::load::LoadOptions o;
  const auto address = gilhost::load::loopback_address(host);
  if (!address) {
    std::fprintf(stderr, "gilhost-load: refusing --host %s: only loopback addresses (127.0.0.0/8, ::1, localhost)\n",
                 host.c_str());
    return 2;
  }
  o.address = *address;
  o.host_header = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  o.ports = ports;
  o.connections = connections;
  o.requests = requests;
  o.timeout_s = timeout_s;
  try {
    const LoadReport report = gilhost::load::run_load(o);
    std::printf("%s\n", to_json(report).dump().c_str());
    return std::fflush(stdout) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gilhost-load: %s\n", e.what());
    return 1;
  }
}
