#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Misbehaving TLS clients for the server tests: hang up mid-handshake, reset, send garbage.

Usage: tls-abuse.py PORT [ROUNDS [THREADS]]
       tls-abuse.py PORT stall CONNECTIONS SECONDS
       tls-abuse.py PORT load THREADS CAFILE


Each round runs every case below once over TLS 1.2 and once over TLS 1.3 ClientHellos,
from THREADS threads at a time, so the server sees many handshakes abandoned while its
signatures are queued. The server may answer anything or close; what must not happen is
a refused connection (the server died) or a connection the server never closes. Exits 1
with a message when that happens, 0 otherwise.

"stall" opens CONNECTIONS connections that each send a ClientHello and then neither read
nor answer for SECONDS: handshakes the server holds open (a stop must not wait forever).

"load" runs well-behaved clients from THREADS threads until SIGTERM: each connection is
one full handshake (TLS 1.2 and 1.3 in turn, no tickets, the certificate verified against
CAFILE for localhost) and one HTTP/1.1 request. Each connection ends as "ok" (the answer
came), "closed" (the server closed it, at any point, without an answer), "reset" or
"refused" (nothing listens: the server stopped). Prints the counts at the end; exits 1
when a connection hung (no progress for TIMEOUT) or failed otherwise (a TLS alert, a
certificate that does not verify, an answer that is not the server's).
"""
import os
import random
import signal
import socket
import ssl
import struct
import sys
import threading
import time

HOST = "127.0.0.1"
TIMEOUT = 10.0  # longer than any server-side handshake must take on loopback


class ServerGone(Exception):
    pass


def client_hello(version):
    """A fresh ClientHello (random, key share) as the first flight a real client sends."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = version
    ctx.maximum_version = version
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def connect(port):
    try:
        s = socket.create_connection((HOST, port), timeout=TIMEOUT)
    except ConnectionRefusedError as e:
        raise ServerGone("connection refused: %s" % e)
    return s


def reset_close(s):
    """Close with RST instead of FIN (SO_LINGER 0)."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def read_some(s):
    """Wait for the server's first bytes (its flight with the signature) or its close."""
    try:
        return s.recv(65536)
    except ConnectionResetError:
        return b""
    except socket.timeout:
        raise ServerGone("no answer to a ClientHello within %.0f s" % TIMEOUT)


def drain_until_closed(s):
    """The server must close a connection that sent garbage (or answer and close)."""
    while True:
        try:
            data = s.recv(65536)
        except ConnectionResetError:
            return
        except socket.timeout:
            raise ServerGone("server kept a garbage connection open for %.0f s" % TIMEOUT)
        if not data:
            return


def case_connect_close(port, hello):
    connect(port).close()


def case_partial_hello(port, hello):
    s = connect(port)
    s.sendall(hello[: random.randint(1, len(hello) - 1)])
    s.close()


def case_hello_close(port, hello):
    s = connect(port)
    s.sendall(hello)
    s.close()


def case_hello_reset(port, hello):
    s = connect(port)
    s.sendall(hello)
    reset_close(s)


def case_hello_read_close(port, hello):
    s = connect(port)
    s.sendall(hello)
    read_some(s)
    s.close()


def send_expect_close(port, *chunks):
    """Send chunks the server must reject; it may answer, but then it must close."""
    s = connect(port)
    try:
        for chunk in chunks:
            s.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    drain_until_closed(s)
    s.close()


def not_a_record(most):
    """5 to most random bytes that no server may take for the start of a record.

    At least a record header's 5 bytes; the first neither a TLS record type
    (20-24) nor with its top bit set, the second not 3 (a record's major
    version). Fewer bytes, a record header (OpenSSL reads one with version 3
    and any type in full before it checks the type) or an SSLv2-format
    ClientHello header (top bit set, third byte 1) announcing more than was
    sent make a server rightly wait for the rest until its own client
    timeout: HAProxy's here is the test's 10 s, so such a case passed or
    failed by milliseconds (3 bytes after a ClientHello: closed after 10.01
    s; 5 bytes: at once)."""
    first = random.choice([b for b in range(0x80) if not 20 <= b <= 24])
    second = random.choice([b for b in range(0x100) if b != 3])
    return bytes([first, second]) + os.urandom(random.randint(3, most - 2))


def case_hello_then_garbage(port, hello):
    send_expect_close(port, hello, not_a_record(4096))


def case_garbage(port, hello):
    send_expect_close(port, not_a_record(16384))


def case_garbage_record(port, hello):
    """A handshake record header announcing a random length, then random bytes.

    The body holds at least a whole 4-byte handshake header, and its type is
    never 1 (ClientHello): a shorter body, or a ClientHello whose random
    24-bit length is still allowed, makes a server rightly wait for the rest
    of a message fragmented over records, and one such case kept a
    connection open until the test's timeout (HAProxy, ASan tree). Every
    other type is unexpected before a ClientHello, and the server closes."""
    body = bytes([random.randint(2, 255)]) + os.urandom(random.randint(3, 2047))
    send_expect_close(port, bytes([0x16, 0x03, 0x01]) + struct.pack(">H", len(body)) + body)


CASES = [case_connect_close, case_partial_hello, case_hello_close, case_hello_reset,
         case_hello_read_close, case_hello_then_garbage, case_garbage, case_garbage_record]
VERSIONS = [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3]


def stall(port, nconn, seconds):
    conns = []
    for i in range(nconn):
        s = connect(port)
        s.sendall(client_hello(VERSIONS[i % 2]))
        conns.append(s)
    print("tls-abuse: %d stalled handshakes" % nconn, flush=True)
    time.sleep(seconds)
    for s in conns:
        s.close()
    return 0


REQUEST = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


def load_one(port, ctx):
    """One connection of "load": its outcome, or ServerGone when it hung."""
    try:
        s = socket.create_connection((HOST, port), timeout=TIMEOUT)
    except ConnectionRefusedError:
        return "refused"
    data = b""
    try:
        tls = ctx.wrap_socket(s, server_hostname="localhost")
        tls.sendall(REQUEST)
        while True:
            chunk = tls.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        raise ServerGone("a connection made no progress for %.0f s" % TIMEOUT)
    except ConnectionResetError:
        return "ok" if b"gpursa ok" in data else "reset"
    except (ssl.SSLEOFError, ssl.SSLZeroReturnError, BrokenPipeError):
        pass  # closed without close_notify: the answer decides
    finally:
        s.close()
    if b"gpursa ok" in data:
        return "ok"
    if data:
        raise ServerGone("not the server's answer: %r" % data[:200])
    return "closed"


def load(port, nthreads, cafile):
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    lock = threading.Lock()
    counts = {"ok": 0, "closed": 0, "reset": 0, "refused": 0}
    failures = []
    contexts = []
    for version in VERSIONS:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(cafile)
        ctx.minimum_version = ctx.maximum_version = version
        ctx.options |= ssl.OP_NO_TICKET
        contexts.append(ctx)

    def worker(i):
        while not stop.is_set():
            try:
                outcome = load_one(port, contexts[i % 2])
            except (ServerGone, ssl.SSLError, OSError) as e:
                with lock:
                    failures.append("%s: %s" % (type(e).__name__, e))
                stop.set()
                return
            with lock:
                counts[outcome] += 1
            i += 1
            if outcome == "refused":
                time.sleep(0.01)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(nthreads)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(0.05)  # the main thread takes SIGTERM
    print("tls-abuse load: " + " ".join("%s=%d" % kv for kv in sorted(counts.items())),
          flush=True)
    if failures:
        print("tls-abuse load: FAILED: " + failures[0], file=sys.stderr, flush=True)
        return 1
    return 0


def main():
    port = int(sys.argv[1])
    if len(sys.argv) == 5 and sys.argv[2] == "stall":
        return stall(port, int(sys.argv[3]), float(sys.argv[4]))
    if len(sys.argv) == 5 and sys.argv[2] == "load":
        return load(port, int(sys.argv[3]), sys.argv[4])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    nthreads = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    jobs = [(case, version) for _ in range(rounds) for case in CASES for version in VERSIONS]
    random.shuffle(jobs)
    lock = threading.Lock()
    failures = []
    done = {}

    def worker():
        while True:
            with lock:
                if not jobs or failures:
                    return
                case, version = jobs.pop()
            try:
                case(port, client_hello(version))
            except ServerGone as e:
                with lock:
                    failures.append("%s (%s): %s" % (case.__name__, version.name, e))
                return
            except OSError:
                pass  # resets and broken pipes are the server's right
            with lock:
                done[case.__name__] = done.get(case.__name__, 0) + 1

    threads = [threading.Thread(target=worker) for _ in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("tls-abuse: " + " ".join("%s=%d" % kv for kv in sorted(done.items())))
    if failures:
        print("tls-abuse: FAILED: " + failures[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
