"""A hostile sandbox, as a process of its own: floods a gateway from one loopback address.

Run by the gateway flood tests (``python -m tests.gateway_flood MODE ...``) so that the
flood's own sockets and buffers are in this process, not in the test process that plays
the worker: whatever the worker's file table and memory show is what the gateway did.

Modes:

``idle HOST PORT SOURCE COUNT`` opens up to ``COUNT`` connections from ``SOURCE`` (a
loopback address such as ``127.0.0.2``) and sends nothing; it prints ``opened N`` and
holds them until its stdin closes, then prints ``open N``: how many the gateway had not
dropped meanwhile.

``bodies HOST PORT SOURCE COUNT MIB KEY`` sends ``COUNT`` requests at once, each
announcing a JSON body of ``MIB`` MiB and sending it slowly (a MiB at a time, a pause
between); it prints ``dropped D of COUNT``: how many connections the gateway closed (or
answered) before their body was all sent.
"""

from __future__ import annotations

import resource
import select
import socket
import sys
import threading
import time

CONNECT_TIMEOUT_S = 2.0
FLOOD_BUDGET_S = 30.0
"""The longest the idle flood spends opening connections (a test's bound on time)."""
PAUSE_S = 0.25
"""The pause between a slow body's MiB chunks."""


def _raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _connect(host: str, port: int, source: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT_S)
    sock.bind((source, 0))
    sock.connect((host, port))
    return sock


def _still_open(sock: socket.socket) -> bool:
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    if not poller.poll(0):
        return True
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except OSError:
        return False


def idle(host: str, port: int, source: str, count: int) -> None:
    """Open idle connections, report, hold them until stdin closes."""
    socks, began = [], time.monotonic()
    while len(socks) < count and time.monotonic() - began < FLOOD_BUDGET_S:
        try:
            socks.append(_connect(host, port, source))
        except OSError:
            time.sleep(0.01)
    print(f"opened {len(socks)}", flush=True)
    sys.stdin.read()
    print(f"open {sum(_still_open(s) for s in socks)}", flush=True)
    for s in socks:
        s.close()


def _slow_body(host: str, port: int, source: str, mib: int, key: str, dropped: list[int]) -> None:
    head = b'{"model": "gpt-5", "max_tokens": 10, "messages": [], "pad": "'
    tail = b'"}'
    size = mib << 20
    request = (
        f"POST /openai/v1/chat/completions HTTP/1.1\r\nhost: {host}\r\nx-api-key: {key}\r\n"
        f"content-type: application/json\r\ncontent-length: {size}\r\n\r\n"
    ).encode()
    try:
        sock = _connect(host, port, source)
    except OSError:
        dropped.append(1)
        return
    with sock:
        sock.settimeout(30)
        try:
            sock.sendall(request + head)
            left = size - len(head) - len(tail)
            while left > 0:
                if not _still_open(sock):
                    dropped.append(1)
                    return
                n = min(left, 1 << 20)
                sock.sendall(b"x" * n)
                left -= n
                time.sleep(PAUSE_S)
            sock.sendall(tail)
        except OSError:
            dropped.append(1)


def bodies(host: str, port: int, source: str, count: int, mib: int, key: str) -> None:
    """Slow huge bodies over ``count`` connections at once; report how many were dropped."""
    dropped: list[int] = []
    threads = [
        threading.Thread(target=_slow_body, args=(host, port, source, mib, key, dropped))
        for _ in range(count)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"dropped {len(dropped)} of {count}", flush=True)


def main(argv: list[str]) -> None:
    """``idle`` or ``bodies``, as the module docstring says."""
    _raise_file_limit()
    mode, host, port, source, count = argv[0], argv[1], int(argv[2]), argv[3], int(argv[4])
    if mode == "idle":
        idle(host, port, source, count)
    elif mode == "bodies":
        bodies(host, port, source, count, int(argv[5]), argv[6])
    else:
        raise SystemExit(f"unknown mode {mode!r}: idle or bodies")


if __name__ == "__main__":
    main(sys.argv[1:])
