"""One request's trip to the API and its answer's way back: streamed, metered, ledgered once.

The request goes out on its attempt's own connections (:mod:`.upstream`); the answer
streams to the agent chunk by chunk while :class:`ResponseMeter` reads its usage; then the
reservation is settled and one ledger line written, whatever happened on the way. An
answer that did not end as the API framed it leaves its attempt's connections unused
from then on.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx

from durabench.gateway.budget import Budgets, Reservation
from durabench.gateway.ledger import CANCELLED, UPSTREAM_CUT, costs_whole_hold
from durabench.gateway.mcp_answer import McpAnswer
from durabench.gateway.meter import ResponseMeter, ResponseUsage
from durabench.gateway.request import AgentRequest
from durabench.gateway.upstream import UpstreamClients

__all__ = ["Send", "exchange", "reply_error", "upstream_failure"]

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}
_RESETS = ("anthropic-ratelimit-", "x-ratelimit-reset")


def upstream_failure(exc: httpx.HTTPError) -> str:
    """The ledger's word for a request that got no answer from the API.

    ``upstream unreachable`` (the host's failure) when the connection failed; a timeout
    while sending or waiting is ``upstream timeout``, which is no harness failure: an
    agent can ask for a long answer unstreamed, or send slowly, and wait it out.
    """
    if isinstance(exc, httpx.ReadTimeout | httpx.WriteTimeout):
        return "upstream timeout"
    return "upstream unreachable"


async def exchange(
    clients: UpstreamClients,
    budgets: Budgets,
    attempt: str,
    req: AgentRequest,
    upstream: httpx.Request,
    send: Send,
    reservation: Reservation | None,
) -> None:
    """The request to the API and its answer to the agent; the ledger line.

    Cancelled (its attempt ended long ago, :mod:`.revocation`), it is ledgered
    ``cancelled`` and charged at least its whole reservation.
    """
    async with clients.client(attempt) as client:
        try:
            response = await client.send(upstream, stream=True)
            req.answered_at = time.time()
        except httpx.HTTPError as exc:
            await clients.spoil(attempt)
            budgets.settle(reservation, 0)
            message = (
                f"durabench gateway could not reach the {req.provider} API: {type(exc).__name__}"
            )
            await reply_error(send, 502, "api_error", message)
            req.record(502, refused=upstream_failure(exc))
            return
        except asyncio.CancelledError:
            await clients.spoil(attempt)
            charged = reservation.tokens if reservation is not None else 0
            budgets.settle(reservation, charged)
            req.record(499, refused=CANCELLED, charged=charged)
            raise
        kind = response.headers.get("content-type", "")
        meter = ResponseMeter(req.provider, kind) if req.provider != "mcp" else None
        answer = McpAnswer(req.rpc, kind) if req.provider == "mcp" else None
        whole = cancelled = False
        try:
            whole = await _relay(response, meter or answer, send)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            await response.aclose()
            if not whole:
                await clients.spoil(attempt)
            _settle(budgets, req, response, meter, reservation, cancelled=cancelled, mcp=answer)


def _settle(
    budgets: Budgets,
    req: AgentRequest,
    response: httpx.Response,
    meter: ResponseMeter | None,
    reservation: Reservation | None,
    *,
    cancelled: bool = False,
    mcp: McpAnswer | None = None,
) -> None:
    """Charge what the answer cost and write its ledger line.

    An MCP answer's line says whether it held a JSON-RPC result to the call.
    """
    usage = meter.usage() if meter is not None else ResponseUsage()
    cut = (
        meter is not None
        and not (meter.ended or meter.unreadable)
        and 200 <= response.status_code < 300
    )
    refused = CANCELLED if cancelled else UPSTREAM_CUT if cut else ""
    charged = usage.input + usage.output + usage.cache_read + usage.cache_write
    if reservation is not None and costs_whole_hold(response.status_code, refused, charged):
        charged = max(charged, reservation.tokens)
    budgets.settle(reservation, charged)
    if req.on_answer is not None:
        req.on_answer(response.headers)
    if req.on_room is not None:
        delay = meter.retry_delay if meter is not None else ""
        req.on_room(response.status_code, response.headers, usage.error, delay)
    req.record(
        response.status_code,
        usage=usage,
        charged=charged,
        refused=refused,
        retry_after=response.headers.get("retry-after", ""),
        resets={k: v for k, v in response.headers.items() if k.lower().startswith(_RESETS)},
        rpc_result=mcp is not None and mcp.finish(),
    )


async def _relay(
    response: httpx.Response, meter: ResponseMeter | McpAnswer | None, send: Send
) -> bool:
    """The answer to the agent as it comes, each chunk metered and let go.

    Whether it arrived whole, as the API framed it (else its connection is not reused).
    """
    headers = [
        (k.encode("latin-1"), v.encode("latin-1"))
        for k, v in response.headers.multi_items()
        if k.lower() not in _HOP
    ]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    whole = False
    try:
        async for chunk in response.aiter_raw():
            if meter is not None:
                meter.feed(chunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        whole = True
    except httpx.HTTPError:
        pass  # the stream was cut: the agent sees it end; the ledger says what came
    await send({"type": "http.response.body", "body": b""})
    return whole


async def reply_error(
    send: Send,
    status: int,
    kind: str,
    message: str,
    *,
    close: bool = False,
    retry_after_s: float | None = None,
) -> None:
    """An error body every CLI shows: Anthropic's shape, with OpenAI's ``message`` too.

    ``close``: the connection is closed after it, so nothing more is read from it.
    ``retry_after_s``: sent as ``retry-after`` (whole seconds, at least 1), which the CLIs'
    SDKs honour before their own backoff: without it a CLI's few seconds of backoff run
    out against a wait of up to a minute, and an honest session ends on the 429.
    """
    doc = {"type": "error", "error": {"type": kind, "message": message}}
    data = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    if retry_after_s is not None:
        headers.append((b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
