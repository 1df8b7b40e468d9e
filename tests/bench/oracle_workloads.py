"""The oracle's workloads (tests/bench/oracle.py): each a script gilhost runs as __main__, about 1 s of
worker threads, bounded in time (a deadline) and, for the sockets, in count. Every worker lives for most
of the case, so its shares are measured over hundreds of milliseconds."""

SPINNERS = """
import threading, time
end = time.monotonic() + 0.8
def spin():
    x = 0
    while time.monotonic() < end:
        x += 1
ts = [threading.Thread(target=spin) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
"""

SHA256 = """
import hashlib, threading, time
end = time.monotonic() + 0.8
block = b"x" * (1 << 20)
def work():
    while time.monotonic() < end:
        hashlib.sha256(block).digest()  # releases the GIL for data over 2 KiB
ts = [threading.Thread(target=work) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
"""

SLEEPERS = """
import threading, time
end = time.monotonic() + 0.8
def spin():
    x = 0
    while time.monotonic() < end:
        x += 1
def nap():
    while time.monotonic() < end:
        time.sleep(0.001)
ts = [threading.Thread(target=spin)] + [threading.Thread(target=nap) for _ in range(3)]
for t in ts: t.start()
for t in ts: t.join()
"""

CONVOY = """
import threading, time
end = time.monotonic() + 0.8
lock = threading.Lock()
def work():
    while time.monotonic() < end:
        with lock:
            x = 0
            for _ in range(2000):
                x += 1
ts = [threading.Thread(target=work) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
"""

SOCKETS = """
import socket, threading, time
end = time.monotonic() + 0.8
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4)
pairs = []
for _ in range(2):
    c = socket.create_connection(srv.getsockname())
    s, _ = srv.accept()
    pairs.append((c, s))
srv.close()
def produce(sock):
    msg = b"y" * 4096
    for _ in range(20000):  # bounded in count and in time
        if time.monotonic() >= end:
            break
        sock.sendall(msg)
        time.sleep(0.0005)
    sock.shutdown(socket.SHUT_WR)
def consume(sock):
    n = 0
    while True:
        data = sock.recv(65536)
        if not data:
            break
        n += len(data)
        x = 0
        for _ in range(len(data) // 8):
            x += 1
    sock.close()
ts = [threading.Thread(target=produce, args=(c,)) for c, _ in pairs]
ts += [threading.Thread(target=consume, args=(s,)) for _, s in pairs]
for t in ts: t.start()
for t in ts: t.join()
for c, _ in pairs: c.close()
"""

JOINS = """
import threading, time
start = time.monotonic()
ts = []
def work(i):
    # Worker i spins for 0.2 s, then waits for worker i+1 (the last one spins 0.8 s).
    end = start + (0.8 if i == 3 else 0.2)
    x = 0
    while time.monotonic() < end:
        x += 1
    if i < 3:
        ts[i + 1].join()
ts.extend(threading.Thread(target=work, args=(i,)) for i in range(4))
for t in ts: t.start()
ts[0].join()
for t in ts: t.join()
"""

WORKLOADS = {
    "spinners": SPINNERS,
    "sha256": SHA256,
    "sleepers": SLEEPERS,
    "convoy": CONVOY,
    "sockets": SOCKETS,
    "joins": JOINS,
}
