"""Whether an MCP server answered as one: a JSON-RPC result to the call the agent made.

An HTTP status says nothing about MCP: a web page at a wrong URL answers every path with
200. What says the server serves MCP is its own answer, as the gateway relays it (JSON, or
server-sent events under streamable HTTP): a JSON-RPC 2.0 message with the call's ``id``
and a ``result`` object. The ledger counts a server as answering only from a result to
:data:`HEALTH_METHODS`, which any MCP server must answer and nothing else would: a reply
to ``ping`` (``{"result": {}}``) an echoing server could fake.

Both sides are read within bounds: the call only from a small body (a handshake is under a
kilobyte), the answer up to :data:`MAX_ANSWER_BYTES`, and each stops reading once it knows.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

__all__ = ["HEALTH_METHODS", "MAX_ANSWER_BYTES", "NO_CALL", "McpAnswer", "RpcCall", "rpc_call"]

HEALTH_METHODS = frozenset({"initialize", "tools/list"})
"""Calls whose JSON-RPC result shows the server works: the handshake and its tool list."""
MAX_ANSWER_BYTES = 4 << 20
"""An answer (or one event of it) past this is passed on unread: no result is seen in it."""
_MAX_CALL_BYTES = 64 << 10
"""A request body past this is not read for its call (its method is ledgered as ``""``)."""


class RpcCall(NamedTuple):
    """The JSON-RPC call one MCP request makes."""

    method: str
    """Its method (at most 64 characters); ``""`` when the body is no single call."""
    id: str | int | None
    """Its id; ``None`` for a notification (which gets no answer) or no call."""


NO_CALL = RpcCall("", None)


def rpc_call(body: bytes | bytearray) -> RpcCall:
    """The single JSON-RPC call in an MCP request's body, or :data:`NO_CALL`."""
    doc = _json(body) if len(body) <= _MAX_CALL_BYTES else None
    if not isinstance(doc, dict) or doc.get("jsonrpc") != "2.0":
        return NO_CALL
    method, call_id = doc.get("method"), doc.get("id")
    if not isinstance(method, str):
        return NO_CALL
    if not _is_id(call_id):
        call_id = None
    return RpcCall(method[:64], call_id)


class McpAnswer:
    """Fed the MCP server's answer chunk by chunk; :attr:`result` once it has been read."""

    def __init__(self, call: RpcCall, content_type: str) -> None:
        self.call = call
        self.sse = "text/event-stream" in content_type
        self.result = False
        """Whether a JSON-RPC result to the call came (after :meth:`finish`)."""
        self._buffer = bytearray()
        self._done = call.id is None

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of the answer."""
        if self._done:
            return
        self._buffer += chunk
        if not self.sse:
            if len(self._buffer) > MAX_ANSWER_BYTES:
                self._stop()
            return
        *lines, rest = self._buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"data:") and self._answers(_json(bytes(line[5:]).strip())):
                self.result = True
                self._stop()
                return
        self._buffer = bytearray(rest)
        if len(rest) > MAX_ANSWER_BYTES:
            self._stop()

    def finish(self) -> bool:
        """The answer ended: whether it held a JSON-RPC result to the call."""
        if self.sse:
            self.feed(b"\n")
        elif not self._done:
            self.result = self._answers(_json(bytes(self._buffer)))
        self._stop()
        return self.result

    def _stop(self) -> None:
        self._done = True
        self._buffer = bytearray()

    def _answers(self, doc: Any) -> bool:
        """Whether ``doc`` is a JSON-RPC 2.0 result object for the call's id."""
        return (
            isinstance(doc, dict)
            and doc.get("jsonrpc") == "2.0"
            and _is_id(doc.get("id"))
            and type(doc.get("id")) is type(self.call.id)
            and doc.get("id") == self.call.id
            and isinstance(doc.get("result"), dict)
        )


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _json(data: bytes | bytearray) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None
