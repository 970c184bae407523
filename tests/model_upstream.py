"""A scripted model API on loopback, for tests: what the gateway forwards to.

It speaks Anthropic Messages (streamed and not), OpenAI Responses (streamed) and Gemini
``streamGenerateContent`` (``alt=sse``) just far enough for the real CLIs and the gateway:
each request is answered by ``script(request)``, a :class:`Reply`, and recorded in
``received`` (headers lower-cased, JSON body) for assertions. ``sent`` sums the usage every
reply reported, which is what a meter of record must arrive at.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ModelUpstream",
    "Received",
    "Reply",
    "anthropic_stream",
    "gemini_stream",
    "openai_stream",
]


@dataclass
class Received:
    """One request as the upstream saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    """One answer: a status, headers, and server-sent events or a JSON body."""

    status: int = 200
    events: list[dict[str, Any]] | None = None
    """Server-sent events (``data:`` lines, ``event:`` from each one's ``type``)."""
    body: Any = None
    """A JSON body, when ``events`` is ``None``."""
    raw: bytes | None = None
    """Bytes sent as they are instead of ``body`` (a web page, say)."""
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    """What this reply reports, summed into :attr:`ModelUpstream.sent`."""
    cut_after: int | None = None
    """Close the connection after this many events (a stream cut mid-message)."""
    hold: threading.Event | None = None
    """Send the headers, then wait for this before any event (a long stream)."""


def anthropic_stream(
    model: str,
    blocks: list[dict[str, Any]],
    *,
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_write: int = 0,
) -> Reply:
    """A streamed Messages reply with ``blocks`` (``text`` or ``tool_use`` dicts)."""
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_scripted",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        }
    ]
    stop = "end_turn"
    for i, block in enumerate(blocks):
        if block["type"] == "tool_use":
            stop = "tool_use"
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            {"type": "content_block_start", "index": i, "content_block": start},
            {"type": "content_block_delta", "index": i, "delta": delta},
            {"type": "content_block_stop", "index": i},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]
    sent = {
        "input": input_tokens,
        "output": output_tokens,
        "cache_read": cache_read,
        "cache_write": cache_write,
    }
    return Reply(events=events, headers={"content-type": "text/event-stream"}, usage=sent)


def _openai_item(i: int, step: str | dict[str, Any]) -> dict[str, Any]:
    """One finished output item: a message (a string) or a function call (a dict)."""
    if isinstance(step, str):
        text = {"type": "output_text", "text": step, "annotations": []}
        return {
            "type": "message",
            "id": f"msg_{i}",
            "role": "assistant",
            "status": "completed",
            "content": [text],
        }
    call = {
        "type": "function_call",
        "id": f"fc_{i}",
        "call_id": step["call_id"],
        "name": step["name"],
        "arguments": json.dumps(step["arguments"]),
        "status": "completed",
    }
    return call | ({"namespace": step["namespace"]} if step.get("namespace") else {})


def openai_stream(
    model: str,
    output: str | list[str | dict[str, Any]],
    *,
    input_tokens: int,
    cached: int,
    output_tokens: int,
) -> Reply:
    """A streamed Responses reply, as Codex reads one: each output item added, its text
    streamed, done, then ``response.completed`` with usage (``total_tokens`` included:
    Codex refuses a usage without it).

    ``output`` is a message's text, or a list of items: texts, and function calls as
    ``{"call_id", "name", "arguments"}`` dicts (with ``namespace`` for a tool in a
    namespace, as Codex offers an MCP server's tools).
    """
    items = [
        _openai_item(i, s) for i, s in enumerate([output] if isinstance(output, str) else output)
    ]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_scripted", "model": model}}
    ]
    for i, item in enumerate(items):
        empty = {"content": []} if item["type"] == "message" else {"arguments": ""}
        added = {**item, **empty, "status": "in_progress"}
        events.append({"type": "response.output_item.added", "output_index": i, "item": added})
        if item["type"] == "message":
            delta = item["content"][0]["text"]
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": i,
                    "content_index": 0,
                    "delta": delta,
                }
            )
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    response = {
        "id": "resp_scripted",
        "model": model,
        "status": "completed",
        "output": items,
        "usage": usage,
    }
    events.append({"type": "response.completed", "response": response})
    sent = {"input": input_tokens - cached, "output": output_tokens, "cache_read": cached}
    return Reply(events=events, headers={"content-type": "text/event-stream"}, usage=sent)


def gemini_stream(
    model: str,
    output: str | list[str | dict[str, Any]],
    *,
    prompt: int,
    output_tokens: int,
    cached: int = 0,
) -> Reply:
    """A streamed ``generateContent`` reply whose chunks carry cumulative usage.

    ``output`` is a text, or a list of parts: texts, and function calls as
    ``{"name", "args"}`` dicts. The last chunk says ``finishReason: STOP``: Gemini CLI
    takes a stream without one for a broken one and retries it.
    """
    steps = [output] if isinstance(output, str) else output
    parts = [{"text": p} if isinstance(p, str) else {"functionCall": p} for p in steps]
    chunks = []
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output_tokens if last else n + 1,
            "cachedContentTokenCount": cached,
            "totalTokenCount": prompt + (output_tokens if last else n + 1),
        }
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        candidate |= {"finishReason": "STOP"} if last else {}
        chunks.append({"candidates": [candidate], "usageMetadata": usage, "modelVersion": model})
    usage = {"input": prompt - cached, "output": output_tokens, "cache_read": cached}
    return Reply(events=chunks, headers={"content-type": "text/event-stream"}, usage=usage)


class ModelUpstream:
    """A threaded HTTP server on loopback that answers by ``script``."""

    def __init__(self, script: Callable[[Received], Reply], host: str = "127.0.0.1") -> None:
        """``host``: loopback, or a Docker network's host address (recording real CLIs)."""
        self.script = script
        self.received: list[Received] = []
        self.sent: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, as a worker's ``*_BASE_URL`` names an upstream."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ModelUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
            reply = self.script(received)
            for k, v in reply.usage.items():
                self.sent[k] = self.sent.get(k, 0) + v
        return reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = upstream._answer(Received(self.command, self.path, headers, body))
                if reply.events is None:
                    data = json.dumps(reply.body).encode() if reply.body is not None else b""
                    data = reply.raw if reply.raw is not None else data
                    self.send_response(reply.status)
                    for k, v in {"content-type": "application/json", **reply.headers}.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("connection", "close")
                self.end_headers()
                if reply.hold is not None:
                    self.wfile.flush()
                    reply.hold.wait(timeout=30)
                for n, event in enumerate(reply.events):
                    if reply.cut_after is not None and n >= reply.cut_after:
                        break
                    kind = event.get("type")
                    line = (f"event: {kind}\n" if kind else "") + f"data: {json.dumps(event)}\n\n"
                    self.wfile.write(line.encode())
                    self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST = do_DELETE = do_PUT = _handle

        return Handler
