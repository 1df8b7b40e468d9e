"""Load client for experiment 9 (http_loops): keep-alive HTTP/1.1 GETs against 127.0.0.1.

Runs in its own process (started by http_loops.py with the same interpreter), so its own
Python work never competes with the server for the server's GIL - but it does take CPU
from the server; gilhost-load (host/load, C++) is the cheap client with the same options
and output, which http_loops.py prefers. It opens `connections`
keep-alive connections, spread round-robin over the given ports, then sends exactly
`requests` requests in total (each connection takes the next one when its previous
response is complete) and prints one JSON object: rps, latency percentiles in ms and the
number of responses per server loop (read from the 8-byte body, e.g. b"loop0003").

Only 127.0.0.1 is ever contacted; the whole run is bounded by --timeout seconds.
Standalone: python scripts/http_load.py --port 8080 --port 8081 --requests 100
"""

import argparse
import asyncio
import json
import sys
import time

try:
    import resource
except ImportError:
    resource = None

HOST = "127.0.0.1"  # never anything else: this is a local benchmark


def percentiles_ms(samples_s):
    """p50/p95/p99/max in ms (nearest rank) of durations in seconds; None when empty."""
    if not samples_s:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "max_ms": None}
    s = sorted(samples_s)
    n = len(s)

    def rank(p):
        # The ceil(p * n / 100)-th sample in integers, exactly as gilhost-load ranks them.
        return round(s[min(n, max(1, -(-p * n // 100))) - 1] * 1000.0, 3)

    return {"p50_ms": rank(50), "p95_ms": rank(95), "p99_ms": rank(99), "max_ms": round(s[-1] * 1000.0, 3)}


class Load:
    """Shared state of all connections (one event loop, so no locking is needed)."""

    def __init__(self, ports, connections, requests):
        self.ports = ports
        self.connections = connections
        self.requests = requests
        self.next_request = 0
        self.latencies = []
        self.per_loop = {}
        self.ok = 0
        self.errors = []
        self.error_count = 0
        self.connected = 0
        self.t_start = None
        self.t_end = None

    def error(self, what):
        self.error_count += 1
        if len(self.errors) < 5:  # a few samples are enough to diagnose
            self.errors.append(what)

    async def connect(self, j):
        port = self.ports[j % len(self.ports)]
        try:
            rw = await asyncio.open_connection(HOST, port)
        except OSError as exc:
            self.error("connect %d: %s: %s" % (port, type(exc).__name__, exc))
            return None
        self.connected += 1
        return rw

    async def drive(self, rw):
        """One keep-alive connection: request, full response, next request."""
        reader, writer = rw
        try:
            while self.next_request < self.requests:
                i = self.next_request
                self.next_request += 1
                t0 = time.perf_counter()
                writer.write(b"GET /r/%d HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n" % i)
                head = await reader.readuntil(b"\r\n\r\n")
                status_line, _, header_block = head.decode("latin-1").partition("\r\n")
                length = 0
                for line in header_block.split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length) if length else b""
                self.latencies.append(time.perf_counter() - t0)
                if not status_line.startswith("HTTP/1.1 200"):
                    self.error("status: %s" % status_line)
                    continue
                self.ok += 1
                loop_id = body[4:].decode("ascii", "replace") if body.startswith(b"loop") else "?"
                self.per_loop[loop_id] = self.per_loop.get(loop_id, 0) + 1
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            self.error("%s: %s" % (type(exc).__name__, exc))
        finally:
            writer.close()

    async def run(self):
        # Connect everything first: the clock measures the request phase only.
        conns = await asyncio.gather(*(self.connect(j) for j in range(self.connections)))
        conns = [c for c in conns if c is not None]
        self.t_start = time.perf_counter()
        try:
            await asyncio.gather(*(self.drive(c) for c in conns))
        finally:
            self.t_end = time.perf_counter()
            for _, writer in conns:
                writer.close()


async def _main_async(load, timeout_s):
    try:
        await asyncio.wait_for(load.run(), timeout_s)
        return False
    except asyncio.TimeoutError:
        return True


def run_load(ports, connections=64, requests=1000, timeout_s=60.0):
    """Run the load and return the report dict (also usable in-process for tests)."""
    load = Load(list(ports), connections, requests)
    timed_out = asyncio.run(_main_async(load, timeout_s))
    t_start = load.t_start if load.t_start is not None else time.perf_counter()
    t_end = load.t_end if load.t_end is not None else time.perf_counter()
    elapsed = max(t_end - t_start, 1e-9)
    responses = len(load.latencies)
    report = {
        "client": "http_load.py",
        "requests": requests,
        "sent": min(load.next_request, requests),
        "responses": responses,
        "ok": load.ok,
        "connections": connections,
        "connected": load.connected,
        "elapsed_s": round(elapsed, 6),
        "rps": round(responses / elapsed, 1),
        "per_loop": dict(sorted(load.per_loop.items())),
        "error_count": load.error_count,
        "errors": load.errors,
        "timed_out": timed_out,
    }
    report.update(percentiles_ms(load.latencies))
    if resource is not None:  # the whole process, as gilhost-load reports it
        ru = resource.getrusage(resource.RUSAGE_SELF)
        report.update(cpu_user_s=round(ru.ru_utime, 6), cpu_system_s=round(ru.ru_stime, 6),
                      cpu_s=round(ru.ru_utime + ru.ru_stime, 6))
    return report


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, action="append", default=[],
                   help="a port on 127.0.0.1; repeat it for several (as gilhost-load takes them)")
    p.add_argument("--ports", default="", help="comma-separated ports on 127.0.0.1")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--requests", type=int, default=1000, help="total requests over all connections")
    p.add_argument("--timeout", type=float, default=60.0, help="hard bound on the whole run, seconds")
    a = p.parse_args(argv)
    ports = a.port + [int(x) for x in a.ports.split(",") if x.strip()]
    if not ports or a.connections < 1 or a.requests < 0:
        p.error("need at least one port, one connection and a request count >= 0")
    print(json.dumps(run_load(ports, a.connections, a.requests, a.timeout)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
