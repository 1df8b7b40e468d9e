"""Experiment 9 (http_loops): an asyncio HTTP/1.1 keep-alive server on N event loops.

Each loop runs in its own thread with its own asyncio.start_server. A request reads the
headers, waits 1 ms (asyncio.sleep, simulated I/O), does `work` iterations of pure-Python
integer arithmetic and answers an 8-byte body naming the loop (b"loop0003"). Under the
GIL the loops share one core's worth of Python, so more loops barely help; on a
free-threaded build the work runs in parallel.

Connections are spread over the loops two ways:
  sharded   - one listening socket (own port) per loop; the client spreads its
              connections round-robin over the ports, so every loop gets some.
  reuseport - every loop listens on the same port with SO_REUSEPORT and the kernel
              picks the socket (Linux hashes connections; macOS sent all to one loop).
Counting responses per loop (from the body) shows whether a loop got any work at all.

The load client runs in a separate process: `connections` keep-alive connections,
`requests` requests, 127.0.0.1 only, hard time bound. It is gilhost-load (C++, one thread,
epoll) when it can be found - gilhost sets GILHOST_LOAD_CLIENT for every run, standalone
use passes --client PATH - else http_load.py with this interpreter. A Python client takes
a core's worth of CPU that a free-threaded server needs on a small machine, so each result
records which client ran ("client") and who used the cores: the server's CPU seconds (this
process, all threads) and the client's (the child's rusage), each also as CPU/wall.
All sockets are bound with port 0 (the OS picks) before the client starts.
The server loops stop by themselves (after the client, or at the latest after a bound).

Call-mode functions (used by configs/http_loops.toml): run_round, compare. The config gives
every case the same [params]; a function ignores the ones it does not use (**_other_params).
Standalone: python scripts/http_loops.py --help
"""

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import sysconfig
import threading
import time

try:
    import gilhost
except ImportError:
    gilhost = None

try:
    import resource
except ImportError:  # not on Windows: CPU shares are then not recorded
    resource = None

HOST = "127.0.0.1"
MODES = ("sharded", "reuseport")
_HERE = os.path.dirname(os.path.abspath(__file__))
_PY_CLIENT = os.path.join(_HERE, "http_load.py")
CLIENT_ENV = "GILHOST_LOAD_CLIENT"  # the host's gilhost-load, set by gilhost for every run


def _build_info():
    is_enabled = getattr(sys, "_is_gil_enabled", None)
    return {
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": bool(is_enabled()) if is_enabled is not None else True,
    }


def _python_executable():
    """The interpreter binary to run the client with.

    Under an embedding host sys.executable may name the host program instead of python, so
    fall back to the python binary of this installation (same version, same build).
    """
    candidates = [sys.executable, getattr(sys, "_base_executable", None)]
    ver = "%d.%d" % sys.version_info[:2]
    suffix = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
    for prefix in (sys.exec_prefix, sys.base_exec_prefix):
        for name in ("python" + ver + suffix, "python" + ver, "python3"):
            candidates.append(os.path.join(prefix, "bin", name))
    for c in candidates:
        if c and os.path.basename(c).startswith("python") and os.access(c, os.X_OK):
            return c
    raise RuntimeError("no python executable found for the load client (tried %s)" % candidates)


def _client_command(client):
    """(argv prefix, name) of the load client: "auto" (gilhost-load from $GILHOST_LOAD_CLIENT when
    executable, else http_load.py), "python" (always http_load.py) or the path of a client that takes
    http_load.py's options."""
    if client == "auto":
        found = os.environ.get(CLIENT_ENV, "")
        client = found if found and os.access(found, os.X_OK) else "python"
    if client == "python":
        return [_python_executable(), _PY_CLIENT], "http_load.py"
    if not os.access(client, os.X_OK):
        raise ValueError("load client %r is not an executable file" % client)
    return [os.path.abspath(client)], os.path.basename(client)


def _cpu_seconds():
    """User + system CPU seconds of (this process, its reaped children); Nones without `resource`."""
    if resource is None:
        return None, None
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _share(cpu_s, wall_s):
    return round(cpu_s / wall_s, 3) if cpu_s is not None and wall_s > 0 else None


def integer_work(n):
    """Pure-Python integer arithmetic: the CPU part of a request."""
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFFFFFF
    return x


class LoopServer:
    """One event loop in its own thread, serving HTTP/1.1 keep-alive on a given socket."""

    def __init__(self, index, sock, work, sleep_s, self_stop_s):
        self.index = index
        self.sock = sock
        self.work = work
        self.sleep_s = sleep_s
        self.self_stop_s = self_stop_s
        self.body = b"loop%04d" % index
        self.served = 0           # only touched by this loop's thread
        self.connections = 0
        self.error = None
        self.stopped_by_itself = False
        self.loop = None
        self._stop = None
        self._handlers = set()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._thread_main, name="http-loop-%d" % index, daemon=True)

    # -- request handling -------------------------------------------------------------
    async def _handle(self, reader, writer):
        task = asyncio.current_task()
        self._handlers.add(task)
        self.connections += 1
        response = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                    b"Connection: keep-alive\r\n\r\n" % len(self.body)) + self.body
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    break  # client closed the keep-alive connection
                lines = head.decode("latin-1").split("\r\n")
                close = False
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    name = name.strip().lower()
                    if name == "connection" and value.strip().lower() == "close":
                        close = True
                    elif name == "content-length":
                        length = int(value.strip())
                if length:
                    await reader.readexactly(length)  # a body is read and ignored
                await asyncio.sleep(self.sleep_s)   # the simulated I/O wait
                integer_work(self.work)             # the CPU part, holds the GIL on GIL builds
                writer.write(response)
                self.served += 1  # counted once committed, before drain can suspend
                await writer.drain()
                if close:
                    break
        except (OSError, asyncio.LimitOverrunError, ValueError):
            pass  # a broken connection ends only itself
        finally:
            self._handlers.discard(task)
            writer.close()

    # -- lifecycle ---------------------------------------------------------------------
    async def _serve(self):
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, sock=self.sock, backlog=512)
        self.loop = asyncio.get_running_loop()
        self.ready.set()
        try:
            # Stops when told, or by itself after the bound, whatever happens to the caller.
            await asyncio.wait_for(self._stop.wait(), self.self_stop_s)
        except asyncio.TimeoutError:
            self.stopped_by_itself = True
        server.close()
        if self._handlers:
            # Once the client has exited its connections end by themselves (EOF): let them, rather than
            # cancel handlers mid-read (3.12.1's streams log every such cancel as an error).
            await asyncio.wait(list(self._handlers), timeout=2.0)
        for t in list(self._handlers):
            t.cancel()
        if self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)
        try:
            await asyncio.wait_for(server.wait_closed(), 5.0)
        except asyncio.TimeoutError:
            pass

    def _thread_main(self):
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self.error = "%s: %s" % (type(exc).__name__, exc)
        finally:
            self.sock.close()  # no-op when the server already closed it
            self.ready.set()   # never leave the starter waiting

    def start(self):
        self.thread.start()

    def stop(self, timeout_s=10.0):
        loop, ev = self.loop, self._stop
        if loop is not None and ev is not None and self.thread.is_alive():
            try:
                loop.call_soon_threadsafe(ev.set)
            except RuntimeError:
                pass  # loop already closed: it stopped by itself
        self.thread.join(timeout_s)


def _listen_socket(port, reuseport):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuseport:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind((HOST, port))
        # Listening before the client starts: connections wait in the backlog of each socket.
        s.listen(512)
        s.setblocking(False)
    except BaseException:
        s.close()
        raise
    return s


def _make_sockets(loops, mode):
    """Returns (sockets, ports) or raises OSError; on error every socket made is closed."""
    socks = []
    try:
        if mode == "sharded":
            for _ in range(loops):
                socks.append(_listen_socket(0, False))
        else:
            first = _listen_socket(0, True)
            socks.append(first)
            port = first.getsockname()[1]
            for _ in range(loops - 1):
                socks.append(_listen_socket(port, True))
    except BaseException:
        for s in socks:
            s.close()
        raise
    # Sharded: one port per loop, in loop order. Reuseport: the one shared port.
    ports = [s.getsockname()[1] for s in socks] if mode == "sharded" else [socks[0].getsockname()[1]]
    return socks, ports


def run_round(loops=4, mode="sharded", work=20_000, requests=1_000, connections=64,
              sleep_ms=1.0, timeout_s=60.0, client="auto", **_other_params):
    """One round: start `loops` server loops, run the client process against them, stop.

    Result: rps, p50_ms/p95_ms/p99_ms, per_loop (responses per loop, from the body), loops_served,
    all_answered (every request got a response and sum over loops == requests) and
    all_loops_served (every loop answered > 0); client (which one ran), server_cpu_s / client_cpu_s
    over round_wall_s (the client's start to its exit) and each as a share (CPU/wall; at most `cpus`).
    For mode="reuseport" without SO_REUSEPORT the result is {"skipped": True, "reason": ...}.
    """
    if mode not in MODES:
        raise ValueError("mode must be one of %s, not %r" % (MODES, mode))
    loops = int(loops)
    client_argv, client_name = _client_command(client)
    base = {"mode": mode, "loops": loops, "work": work, "requests": requests, "connections": connections,
            "client": client_name}
    base.update(_build_info())
    if mode == "reuseport" and not hasattr(socket, "SO_REUSEPORT"):
        base.update(skipped=True, reason="socket.SO_REUSEPORT is not available on this platform")
        return base
    try:
        socks, ports = _make_sockets(loops, mode)
    except OSError as exc:
        if mode == "reuseport":
            base.update(skipped=True, reason="SO_REUSEPORT bind failed: %s" % exc)
            return base
        raise

    servers = [LoopServer(k, socks[k], work, sleep_ms / 1000.0, timeout_s + 30.0) for k in range(loops)]
    proc = None
    try:
        for s in servers:
            s.start()
        for s in servers:
            if not s.ready.wait(30.0) or s.error:
                raise RuntimeError("server loop %d did not start: %s" % (s.index, s.error))
        cmd = list(client_argv)
        for port in ports:
            cmd += ["--port", str(port)]
        cmd += ["--connections", str(connections), "--requests", str(requests), "--timeout", str(timeout_s)]
        # The server loops idle until the client connects, so this window holds the round's CPU.
        cpu0 = _cpu_seconds()
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, cwd=_HERE)
        try:
            out, err = proc.communicate(timeout=timeout_s + 20.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError("load client exceeded its hard bound of %.0f s" % (timeout_s + 20.0))
        round_wall_s = time.monotonic() - t0
        cpu1 = _cpu_seconds()  # the client is reaped: its whole life counts under children
        server_cpu_s, client_cpu_s = (None, None) if cpu0[0] is None else (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        for s in servers:
            s.stop()
    stuck = [s.index for s in servers if s.thread.is_alive()]
    if stuck:
        raise RuntimeError("server loops did not stop: %s" % stuck)
    if proc.returncode != 0:
        raise RuntimeError("load client %s failed (exit %s): %s"
                           % (client_name, proc.returncode, err.decode(errors="replace")[-2000:]))
    try:
        report = json.loads(out.decode())
    except ValueError:
        raise RuntimeError("load client printed no JSON: %r / %r" % (out[-500:], err[-500:]))

    served = [s.served for s in servers]
    client_per_loop = [report["per_loop"].get("%04d" % k, 0) for k in range(loops)]
    unknown = sum(report["per_loop"].values()) - sum(client_per_loop)
    # The body names the loop that answered; it must agree with that loop's own count.
    if client_per_loop != served or unknown:
        raise RuntimeError("per-loop counts disagree: client %s (+%d unknown), server %s"
                           % (client_per_loop, unknown, served))
    loops_served = sum(1 for c in served if c > 0)
    result = dict(base)
    result.update({
        "rps": report["rps"],
        "p50_ms": report["p50_ms"],
        "p95_ms": report["p95_ms"],
        "p99_ms": report["p99_ms"],
        "max_ms": report["max_ms"],
        "elapsed_s": report["elapsed_s"],
        "responses": report["responses"],
        "per_loop": served,
        "connections_per_loop": [s.connections for s in servers],
        "loops_served": loops_served,
        "all_answered": report["responses"] == requests and sum(served) == requests,
        "all_loops_served": loops_served == loops,
        "client_errors": report["error_count"],
        "client_error_samples": report["errors"],
        "client_timed_out": report["timed_out"],
        "ports": len(ports),
        "round_wall_s": round(round_wall_s, 6),
        "server_cpu_s": None if server_cpu_s is None else round(server_cpu_s, 6),
        "client_cpu_s": None if client_cpu_s is None else round(client_cpu_s, 6),
        "server_cpu_share": _share(server_cpu_s, round_wall_s),
        "client_cpu_share": _share(client_cpu_s, round_wall_s),
        "cpus": _usable_cpus(),
    })
    if gilhost is not None:
        gilhost.metric("rps", result["rps"])
        gilhost.metric("p99_ms", result["p99_ms"])
        if result["server_cpu_share"] is not None:
            gilhost.metric("server_cpu_share", result["server_cpu_share"])
            gilhost.metric("client_cpu_share", result["client_cpu_share"])
    return result


def compare(work=20_000, loops=4, mode="sharded", requests=1_000, connections=64,
            sleep_ms=1.0, timeout_s=60.0, rounds=2, client="auto", **_other_params):
    """1 loop vs `loops` loops at the same `work`; speedup = rps(loops) / rps(1).

    The two layouts alternate for `rounds` rounds and each keeps its best rps: rounds at
    small `work` last only tens of ms, where one scheduling hiccup would fake a ratio.
    The CPU shares (server and client, CPU/wall) are those of the two best rounds.
    """
    ones, manys = [], []
    for _ in range(max(1, int(rounds))):
        ones.append(run_round(1, mode, work, requests, connections, sleep_ms, timeout_s, client))
        manys.append(run_round(loops, mode, work, requests, connections, sleep_ms, timeout_s, client))
        if manys[-1].get("skipped"):
            return manys[-1]
    one = max(ones, key=lambda r: r["rps"])
    many = max(manys, key=lambda r: r["rps"])
    result = {
        "work": work,
        "mode": mode,
        "loops": loops,
        "rounds": len(ones),
        "rps_1": one["rps"],
        "rps_n": many["rps"],
        "speedup": round(many["rps"] / one["rps"], 3) if one["rps"] else None,
        "rps_1_rounds": [r["rps"] for r in ones],
        "rps_n_rounds": [r["rps"] for r in manys],
        "p99_ms_1": one["p99_ms"],
        "p99_ms_n": many["p99_ms"],
        "per_loop_n": many["per_loop"],
        "client": many["client"],
        "server_cpu_share_1": one["server_cpu_share"],
        "server_cpu_share_n": many["server_cpu_share"],
        "client_cpu_share_1": one["client_cpu_share"],
        "client_cpu_share_n": many["client_cpu_share"],
        "cpus": many["cpus"],
        "all_answered": all(r["all_answered"] for r in ones + manys),
        "all_loops_served": all(r["all_loops_served"] for r in manys),
    }
    result.update(_build_info())
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("case", nargs="?", default="round", choices=["round", "compare", "all"],
                   help="round: one server round; compare: 1 vs --loops loops; "
                        "all: loops 1/2/4/8, work sweep (compare), reuseport")
    p.add_argument("--loops", type=int, default=4)
    p.add_argument("--mode", choices=MODES, default="sharded")
    p.add_argument("--work", type=int, default=20_000, help="integer-work iterations per request")
    p.add_argument("--requests", type=int, default=1_000, help="requests per round")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--sleep-ms", type=float, default=1.0, help="simulated I/O wait per request")
    p.add_argument("--timeout", type=float, default=60.0, help="hard bound of the client, seconds")
    p.add_argument("--rounds", type=int, default=2, help="alternating rounds per layout in 'compare' (best kept)")
    p.add_argument("--client", default="auto",
                   help="load client: a path (e.g. build/gilhost-load), 'python' (http_load.py) or 'auto' "
                        "($%s if set, else http_load.py)" % CLIENT_ENV)
    a = p.parse_args(argv)
    kw = dict(requests=a.requests, connections=a.connections, sleep_ms=a.sleep_ms, timeout_s=a.timeout,
              client=a.client)
    results = {}
    if a.case == "round":
        results["round"] = run_round(a.loops, a.mode, a.work, **kw)
    elif a.case == "compare":
        results["compare"] = compare(a.work, a.loops, a.mode, rounds=a.rounds, **kw)
    else:
        for n in (1, 2, 4, 8):
            results["loops=%d" % n] = run_round(n, "sharded", a.work, **kw)
        for w in (0, 1_000, 5_000, 20_000):
            results["compare[work=%d]" % w] = compare(w, a.loops, "sharded", rounds=a.rounds, **kw)
        results["reuseport"] = run_round(a.loops, "reuseport", a.work, **kw)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
