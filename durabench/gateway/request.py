"""One agent request as the gateway reads it: its body within a limit, its model, its cost.

The body is read chunk by chunk and refused the moment it passes
:data:`MAX_REQUEST_BYTES` (or at once, when its ``content-length`` says it will), and it
is held once: forwarded from the same buffer in slices, not joined or copied whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any, Literal

from durabench.gateway.ledger import LedgerEntry
from durabench.gateway.meter import ResponseUsage
from durabench.gateway.providers import ProviderName
from durabench.numerals import read_int

__all__ = ["MAX_REQUEST_BYTES", "AgentRequest", "read_body"]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]

MAX_REQUEST_BYTES = 32 << 20
"""A request body past this is refused: the APIs take no larger request."""
_SLICE = 64 << 10


class BodyTooLarge(Exception):
    """The body passed :data:`MAX_REQUEST_BYTES`."""


async def read_body(receive: Receive, declared: str | None) -> bytearray:
    """The whole body, read within :data:`MAX_REQUEST_BYTES`.

    Raises:
        BodyTooLarge: its ``content-length`` (``declared``) or its bytes pass the limit.
    """
    size = None if declared is None else read_int(declared)
    if declared is not None and (size is None or size > MAX_REQUEST_BYTES):
        raise BodyTooLarge
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_REQUEST_BYTES:
            raise BodyTooLarge
        if not message.get("more_body"):
            return body


class AgentRequest:
    """One agent request: where it goes, what it says, and what it asks for."""

    def __init__(
        self,
        provider: ProviderName | Literal["mcp"],
        path: str,
        method: str,
        headers: dict[str, str],
        query: list[tuple[str, str]],
    ) -> None:
        self.provider, self.path, self.method = provider, path, method
        self.headers, self.query = headers, query
        self.body = bytearray()
        self.doc: dict[str, Any] = {}
        """The body as JSON, when it is a JSON object."""
        self.started = time.time()

    def take_body(self, body: bytearray) -> None:
        """Keep the body, and read it as JSON when it is."""
        self.body = body
        try:
            doc = json.loads(body) if body else {}
        except ValueError:
            doc = {}
        self.doc = doc if isinstance(doc, dict) else {}

    def asked_model(self) -> str:
        """The model the API will serve: the body's, or for Gemini the path's.

        Gemini serves the model its path names whatever the body says, so a body field
        there must not stand in for it.
        """
        if self.provider == "gemini":
            if "/models/" in self.path:
                return self.path.split("/models/", 1)[1].split(":", 1)[0][:200]
            return ""
        model = self.doc.get("model")
        return model[:200] if isinstance(model, str) else ""

    def force_usage(self) -> None:
        """Make a streamed chat completion report its usage.

        OpenAI sends none unless ``stream_options.include_usage`` is set, and the meter
        would read zero.
        """
        if self.provider != "openai" or self.path != "/v1/chat/completions":
            return
        if self.doc.get("stream") is not True:
            return
        options = self.doc.get("stream_options")
        options = options if isinstance(options, dict) else {}
        if options.get("include_usage") is True:
            return
        self.doc["stream_options"] = options | {"include_usage": True}
        self.body = bytearray(json.dumps(self.doc).encode())

    async def content(self) -> AsyncIterator[bytes]:
        """The body in slices, for the upstream request."""
        view = memoryview(self.body)
        for start in range(0, len(view), _SLICE):
            yield bytes(view[start : start + _SLICE])

    def entry(self, status: int, **fields: Any) -> LedgerEntry:
        """The request's ledger line."""
        now = time.time()
        fields.setdefault("usage", ResponseUsage())
        return LedgerEntry(
            at=now,
            provider=self.provider,
            path=self.path[:500],
            status=status,
            asked_model=self.asked_model(),
            seconds=round(now - self.started, 3),
            **fields,
        )
