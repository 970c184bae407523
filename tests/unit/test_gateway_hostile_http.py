"""Hostile HTTP against the gateway as its process serves it, the way proxy test suites attack.

Two attempts share one gateway and one upstream: attempt A (the attacker) sends each
shape below on raw sockets from a sandbox's address; attempt B (an honest lane) sends
ordinary requests before and after. After every shape:

* the upstream saw only requests the gateway passes on (method and path on its
  allow-list, headers on its allow-list, no framing header of the agent's);
* every request the gateway could attribute to A has exactly one line in A's ledger,
  and A's budget holds nothing once its requests have ended;
* B's answers are B's own (an answer smuggled onto a shared connection would be read by
  B's next request), and B's ledger counts B's requests only.

Shapes: CL.TE, TE.CL, TE.TE and obfuscated Transfer-Encodings, duplicate and listed
Content-Lengths, obs-fold, bare LF, non-ASCII and control bytes in headers, hop-by-hop and
proxy headers, a GET with a chunked body hiding a request, pipelining, a half-closed
connection, and deep, wide and oversized bodies.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from durabench.gateway.allowlist import allowed
from durabench.gateway.headers import FORWARDED_EXACT, FORWARDED_PREFIXES
from durabench.gateway.ledger import INCOMPLETE, MALFORMED, read_entries
from durabench.gateway.limits import GatewayLimits
from tests.gateway_rig import GatewayRig, hardened_rig
from tests.model_upstream import Received, Reply

MODEL = "claude-haiku-4-5"
SANDBOX = "127.0.0.2"
"""Sandboxes' address: not the gateway's own, so they get no health detail."""
SMUGGLED = (
    b"POST /v1/messages/batches HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\n"
    b'Content-Length: 48\r\n\r\n{"requests": [{"custom_id": "SMUGGLED-batch"}]}\n'
)
"""A request the gateway refuses, hidden in a body: the API must never see it."""
LIMITS = GatewayLimits(keep_alive_sec=2.0, header_timeout_sec=30.0, body_timeout_sec=60.0)


def _echo(received: Received) -> Reply:
    """The API: a message echoing the request's marker, or the model list."""
    if received.method == "GET":
        return Reply(body={"data": [{"id": MODEL}]})
    body = received.body if isinstance(received.body, dict) else {}
    marker = str(body.get("metadata", {}).get("user_id", "SMUGGLED"))
    usage = {"input_tokens": 10, "output_tokens": 5}
    doc = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": f"echo {marker}"}],
        "stop_reason": "end_turn",
        "usage": usage,
    }
    return Reply(body=doc, usage={"input": 10, "output": 5})


def _message(marker: str) -> bytes:
    doc = {"model": MODEL, "max_tokens": 16, "metadata": {"user_id": marker}, "messages": []}
    return json.dumps(doc).encode()


def _chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"


def _head(method: str, path: str, key: str, *lines: str, version: str = "1.1") -> bytes:
    top = [f"{method} {path} HTTP/{version}", "Host: gateway", f"x-api-key: {key}", *lines]
    return ("\r\n".join(top) + "\r\n\r\n").encode("latin-1")


class Shape(NamedTuple):
    """One attack: its bytes (``{key}`` the attacker's placeholder) and what is due."""

    data: bytes
    refused: tuple[str, ...] = (MALFORMED,)
    """A's ledger lines in order, by their ``refused`` (``""``: passed to the API, as an
    ordinary request): each request the gateway can tell is A's ends in exactly one."""
    half_close: bool = False

    @property
    def forwarded(self) -> int:
        """How many of A's requests the API may see."""
        return self.refused.count("")


MSG = "/anthropic/v1/messages"
BODY = _message("A")
HIDDEN = _chunked(_message("SMUGGLED " + SMUGGLED.decode()))
"""A chunked body that is an allowed request whose text hides :data:`SMUGGLED`."""
CL = f"Content-Length: {len(HIDDEN)}"
TE = "Transfer-Encoding: chunked"
_START = b'{"model": "' + MODEL.encode() + b'", "max_tokens": 1, "messages": [], "x": '
DEEP = _START + b"[" * 200_000 + b"]" * 200_000 + b"}"
WIDE = _START + b"[" + b"0," * 2_000_000 + b"0]}"


def _smuggling_shapes() -> dict[str, Shape]:
    """Heads ambiguous about where the request ends, or about their own bytes."""
    msg, body, hidden, cl, te = MSG, BODY, HIDDEN, CL, TE
    return {
        "CL.TE": Shape(_head("POST", msg, "{key}", cl, te) + hidden),
        "TE.CL": Shape(_head("POST", msg, "{key}", te, cl) + hidden),
        "TE.TE": Shape(_head("POST", msg, "{key}", te, "Transfer-Encoding: identity") + hidden),
        "TE xchunked": Shape(_head("POST", msg, "{key}", "Transfer-Encoding: xchunked") + hidden),
        "TE gzip, chunked": Shape(
            _head("POST", msg, "{key}", "Transfer-Encoding: gzip, chunked") + hidden
        ),
        "TE space before colon": Shape(
            _head("POST", msg, "{key}", "Transfer-Encoding : chunked", cl) + hidden
        ),
        "TE on HTTP/1.0": Shape(_head("POST", msg, "{key}", te, version="1.0") + hidden),
        "duplicate CL, equal": Shape(
            _head(
                "POST", msg, "{key}", f"Content-Length: {len(body)}", f"Content-Length: {len(body)}"
            )
            + body,
        ),
        "duplicate CL, differing": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(body)}", "Content-Length: 3") + body,
        ),
        "CL list": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(body)}, {len(body)}") + body
        ),
        "obs-fold TE": Shape(
            _head("POST", msg, "{key}", "Transfer-Encoding:", " chunked") + hidden
        ),
        "obs-fold value": Shape(
            _head("POST", msg, "{key}", "anthropic-beta: a,", " b", f"Content-Length: {len(body)}")
            + body,
        ),
        "bare LF": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(body)}").replace(b"\r\n", b"\n")
            + body,
        ),
        "Latin-1 header byte": Shape(
            _head("POST", msg, "{key}", "x-note: caf\xe9", f"Content-Length: {len(body)}") + body,
        ),
        "control byte": Shape(
            _head("POST", msg, "{key}", "x-note: a\x01b", f"Content-Length: {len(body)}") + body,
        ),
        "GET with a chunked body hiding a request": Shape(
            _head("GET", "/anthropic/v1/models", "{key}", te) + _chunked(SMUGGLED)
        ),
    }


def _traffic_shapes() -> dict[str, Shape]:
    """Headers for proxies, several requests on one connection, and bodies too big."""
    msg, body, hidden, cl, te, deep, wide = MSG, BODY, HIDDEN, CL, TE, DEEP, WIDE
    return {
        "hop-by-hop and proxy headers": Shape(
            _head(
                "GET",
                "/anthropic/v1/models",
                "{key}",
                "Connection: close, x-api-key, te",
                "Keep-Alive: timeout=999",
                "TE: trailers",
                "Trailer: x-api-key",
                "Upgrade: h2c",
                "Proxy-Authorization: Basic Zm9vOmJhcg==",
                "Proxy-Connection: keep-alive",
                "Forwarded: for=10.0.0.1;host=api.anthropic.com",
                "X-Forwarded-For: 10.0.0.1",
                "X-Forwarded-Host: evil.example",
                "X-HTTP-Method-Override: DELETE",
                "Expect: 100-continue",
            ),
            ("",),
        ),
        "pipelined: an ordinary request, then CL.TE": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(body)}")
            + body
            + _head("POST", msg, "{key}", cl, te)
            + hidden,
            ("", MALFORMED),
        ),
        "pipelined: two ordinary requests": Shape(
            _head("GET", "/anthropic/v1/models", "{key}")
            + _head("GET", "/anthropic/v1/models", "{key}", "Connection: close"),
            ("", ""),
        ),
        "half-closed mid-body": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(body) + 100}") + body,
            (INCOMPLETE,),
            half_close=True,
        ),
        "deep body": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(deep)}") + deep, ("size",)
        ),
        "wide body": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {len(wide)}") + wide, ("size",)
        ),
        "oversized body": Shape(
            _head("POST", msg, "{key}", f"Content-Length: {64 << 20}") + body, ("size",)
        ),
    }


SHAPES = {**_smuggling_shapes(), **_traffic_shapes()}


async def _open(rig: GatewayRig) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the gateway from a sandbox's address."""
    host, port = rig.url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.bind((SANDBOX, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    return await asyncio.open_connection(sock=sock)


async def _raw(rig: GatewayRig, data: bytes, *, half_close: bool = False) -> bytes:
    """Send ``data`` from a sandbox's address; everything the gateway answers, to its close."""
    reader, writer = await _open(rig)
    writer.write(data)
    try:
        await writer.drain()
        if half_close:
            writer.write_eof()
        return await asyncio.wait_for(reader.read(), 60)
    except ConnectionError:  # refused and closed while we still sent
        return b""
    finally:
        writer.close()


def _statuses(answer: bytes) -> list[int]:
    return [int(s) for s in re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)]


def _assert_only_allowed(received: list[Received]) -> None:
    for r in received:
        assert allowed("anthropic", r.method, r.path.partition("?")[0]) is not None, r.path
        assert "SMUGGLED" not in json.dumps(r.body), r
        for name in r.headers:
            fine = name in FORWARDED_EXACT or name.startswith(FORWARDED_PREFIXES)
            own = name in ("host", "content-length", "x-api-key", "accept-encoding")
            assert fine or own or (name, r.headers[name]) == ("connection", "keep-alive"), name


@pytest.fixture
async def two_attempts(tmp_path: Path) -> AsyncIterator[tuple[GatewayRig, str, str, Path]]:
    async with hardened_rig(tmp_path, _echo, LIMITS) as rig:
        a = rig.grant(model=MODEL, budget_tokens=1_000_000)
        b_ledger = tmp_path / "b.jsonl"
        b = rig.grant(model=MODEL, attempt="run-1-task-1-mcp-1", ledger=str(b_ledger))
        yield rig, a, b, b_ledger


async def _honest(rig: GatewayRig, key: str, marker: str) -> Any:
    answer = await rig.send("POST", "/anthropic/v1/messages", key, content=_message(marker))
    assert answer.status_code == 200, answer.text
    return answer.json()["content"][0]["text"]


@pytest.mark.parametrize("name", sorted(SHAPES))
async def test_a_hostile_request_reaches_nothing_and_is_ledgered_once(
    two_attempts: tuple[GatewayRig, str, str, Path], name: str
) -> None:
    rig, a, b, b_ledger = two_attempts
    shape = SHAPES[name]
    assert await _honest(rig, b, "B-before") == "echo B-before"
    answer = await _raw(rig, shape.data.replace(b"{key}", a.encode()), half_close=shape.half_close)
    assert await _honest(rig, b, "B-after") == "echo B-after"
    statuses = _statuses(answer)
    assert all(s < 500 for s in statuses), answer[:400]
    assert statuses.count(200) <= shape.forwarded
    a_lines = read_entries(rig.ledger)
    assert tuple(e.refused for e in a_lines) == shape.refused, [
        (e.status, e.refused) for e in a_lines
    ]
    assert all(e.status < 500 for e in a_lines), a_lines
    spent, held = rig.app.budgets.held(str(rig.ledger))
    assert held == 0 and spent == sum(e.charged for e in a_lines)
    from_a = len(rig.upstream.received) - 2
    assert 0 <= from_a <= shape.forwarded
    _assert_only_allowed(rig.upstream.received)
    assert [e.status for e in read_entries(b_ledger)] == [200, 200]


async def test_healthz_shows_a_sandbox_nothing_of_another_attempts_requests(
    tmp_path: Path,
) -> None:
    """The baseline's view of the gateway is the same whatever the MCP lane has in flight."""
    import threading

    release = threading.Event()

    def slow(received: Received) -> Reply:
        release.wait(30)
        return _echo(received)

    async with hardened_rig(tmp_path, slow, LIMITS) as rig:
        a = rig.grant(model=MODEL)
        probe = _head("GET", "/healthz", "none", "Connection: close")
        idle = await _raw(rig, probe)
        busy = asyncio.create_task(_honest(rig, a, "A-1"))  # the other lane, in flight
        while not rig.upstream.received:
            await asyncio.sleep(0.01)
        during = await _raw(rig, probe)
        release.set()
        await busy
    assert _statuses(idle) == [200]
    assert idle.partition(b"\r\n\r\n")[2] == during.partition(b"\r\n\r\n")[2]
    assert b"in_flight" not in idle and b"pid" not in idle


async def _until(check: Any) -> None:
    while not check():
        await asyncio.sleep(0.01)


async def test_one_attempts_bodies_in_flight_are_capped_and_the_other_is_answered(
    two_attempts: tuple[GatewayRig, str, str, Path],
) -> None:
    """Two 25 MiB bodies in flight fit under the attempt's 64 MiB; a third does not."""
    rig, a, b, b_ledger = two_attempts
    head = _head("POST", "/anthropic/v1/messages", a, f"Content-Length: {30 << 20}")
    part = b"x" * (25 << 20)
    held = rig.app.bodies.held
    slow = [await _open(rig) for _ in range(2)]
    for n, (_, writer) in enumerate(slow, start=1):
        writer.write(head + part)
        await _until(lambda n=n: held.get(str(rig.ledger), 0) >= n * len(part))
    third = await _raw(rig, head + part)  # refused as it streams in (the answer may be lost)
    assert _statuses(third) in ([], [429])
    assert [(e.status, e.refused) for e in read_entries(rig.ledger)] == [(429, "size")]
    assert await _honest(rig, b, "B-meanwhile") == "echo B-meanwhile"
    for _, writer in slow:
        writer.close()
    await _until(lambda: len(read_entries(rig.ledger)) == 3)
    await _until(lambda: not held)
    assert sorted(e.refused for e in read_entries(rig.ledger)) == [INCOMPLETE, INCOMPLETE, "size"]
    assert rig.upstream.received and all(r.headers.get("x-api-key") for r in rig.upstream.received)
    assert len(rig.upstream.received) == 1  # B's only


async def test_a_fault_of_the_gateways_own_is_ledgered_once_and_its_reservation_released(
    two_attempts: tuple[GatewayRig, str, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever raises after admission, the request still ends in one line, never a bare 500."""
    rig, a, b, b_ledger = two_attempts

    def broken(*args: object) -> dict[str, str]:
        raise RuntimeError("a bug")

    monkeypatch.setattr("durabench.gateway.app.outgoing_headers", broken)
    answer = await rig.send("POST", "/anthropic/v1/messages", a, content=_message("A"))
    assert answer.status_code == 500 and "see its log" in answer.text
    assert [(e.status, e.refused) for e in read_entries(rig.ledger)] == [(500, "gateway error")]
    assert rig.app.budgets.held(str(rig.ledger)) == (0, 0)
    assert rig.upstream.received == []


async def test_a_stalled_body_is_refused_and_ledgered_and_its_reservation_released(
    tmp_path: Path,
) -> None:
    """A sender that stops mid-body gets 408 at its deadline (here half a second), one line."""
    limits = GatewayLimits(body_timeout_sec=0.5)
    async with hardened_rig(tmp_path, _echo, limits) as rig:
        a = rig.grant(model=MODEL, budget_tokens=1_000_000)
        body = _message("A")
        head = _head("POST", "/anthropic/v1/messages", a, f"Content-Length: {len(body) + 10}")
        reader, writer = await _open(rig)
        writer.write(head + body)  # ten bytes short, and the connection held open
        answer = await asyncio.wait_for(reader.read(), 60)
        writer.close()
        spent, held = rig.app.budgets.held(str(rig.ledger))
    assert _statuses(answer) == [408]
    assert [(e.status, e.refused) for e in read_entries(rig.ledger)] == [(408, INCOMPLETE)]
    assert (spent, held) == (0, 0) and rig.upstream.received == []
