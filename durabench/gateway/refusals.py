"""The gateway's own answers to an admitted request: why, its status, its one ledger line.

A refusal names the check that refused (``refused`` in the ledger), answers with an error
body every CLI shows, and closes the connection, so nothing after it on that connection
is read as a request. The body is read here too, since most refusals are about it: its
size, its shape, its attempt's share of the gateway's memory, its arrival; and the
attempt's share of its account's rate limit (:mod:`.rate_share`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping

from durabench.gateway.exchange import Send, reply_error
from durabench.gateway.grants import Grant
from durabench.gateway.ledger import INCOMPLETE, MALFORMED, RATE_SHARE
from durabench.gateway.rate_share import RateShares
from durabench.gateway.request import (
    MAX_ATTEMPT_BYTES,
    MAX_ELEMENTS,
    AgentRequest,
    AttemptBytesFull,
    BodyBytes,
    BodyIncomplete,
    BodyTooLarge,
    BodyTooSlow,
    Receive,
    read_body,
)
from durabench.wording import counted

__all__ = ["Refused", "place", "refuse", "take_body"]

_BODILESS = ("GET", "HEAD", "DELETE")
"""Methods whose requests carry no body to the APIs: one that does hides something."""


class Refused(Exception):
    """The gateway answers the request itself: ``status``, ledgered as ``reason``."""

    def __init__(
        self, status: int, reason: str, kind: str, message: str, retry_after_s: float = 1.0
    ) -> None:
        """``retry_after_s``: when a 429 or 503 may be tried again (its ``retry-after``)."""
        super().__init__(message)
        self.status, self.reason, self.kind = status, reason, kind
        self.retry_after_s = retry_after_s


async def refuse(send: Send, req: AgentRequest, refusal: Refused) -> None:
    """Answer the refusal (and close the connection: nothing after it is read); ledger it."""
    with contextlib.suppress(Exception):  # the agent may be gone; the line is written anyway
        await reply_error(
            send,
            refusal.status,
            refusal.kind,
            str(refusal),
            close=True,
            retry_after_s=refusal.retry_after_s if refusal.status in (429, 503) else None,
        )
    req.record(refusal.status, refused=refusal.reason)


async def take_body(req: AgentRequest, receive: Receive, bodies: BodyBytes, *, parse: bool) -> None:
    """Read the body within its limits; parse it (bounded, off the loop) when ``parse``.

    ``bodies``: what each attempt holds, which this body counts against.

    Raises:
        Refused: too large, too deep or too wide (413), or more than its attempt may
            hold in flight (429); cut short or too slow (400, 408); a body on a method
            that carries none (400).
    """

    def room(n: int) -> bool:
        if not bodies.take(req.ledger, n):
            return False
        req.held += n
        return True

    try:
        body = await read_body(receive, req.headers.get("content-length"), room)
        if body and req.method in _BODILESS:
            message = f"durabench gateway: a {req.method} request carries no body"
            raise Refused(400, MALFORMED, "invalid_request_error", message)
        await req.take_body(body, parse=parse)
    except AttemptBytesFull:
        message = (
            f"durabench gateway: this attempt's requests in flight hold "
            f"{MAX_ATTEMPT_BYTES >> 20} MiB of bodies, the most they may; retry when one ends"
        )
        raise Refused(429, "size", "too_many_requests_in_flight", message) from None
    except BodyTooLarge:
        message = (
            "durabench gateway: request body too large (past 32 MiB, "
            f"{MAX_ELEMENTS:,} JSON values, or nested too deep)"
        )
        raise Refused(413, "size", "request_too_large", message) from None
    except BodyTooSlow:
        message = "durabench gateway: the request's body did not arrive in time"
        raise Refused(408, INCOMPLETE, "request_timeout", message) from None
    except BodyIncomplete:
        message = "durabench gateway: the request's body ended before its length"
        raise Refused(400, INCOMPLETE, "invalid_request_error", message) from None


def place(shares: RateShares, grant: Grant, req: AgentRequest) -> None:
    """Place the request in its attempt's minute, and judge it again by its answer.

    Raises:
        Refused: it is past its attempt's share of the account's rate limit (429).
    """
    account = (grant.provider, grant.account or "")
    placed = shares.admit(grant.attempt, account)
    req.rate_share = placed.share
    if placed.refused:
        req.beyond_share = True
        message = (
            f"durabench gateway: this attempt sent {counted(placed.share, 'request')} in the last "
            f"minute, its share of the account's rate limit ({shares.limits[account]} a "
            f"minute over {counted(shares.attempts_on(account), 'attempt')}); retry in "
            f"{math.ceil(placed.wait)} s"
        )
        raise Refused(429, RATE_SHARE, "rate_limit_error", message, retry_after_s=placed.wait)

    def answered(headers: Mapping[str, str]) -> None:
        shares.learn(account, headers)
        if not placed.share:  # sent before a limit was known: judged by the one now known
            req.rate_share = shares.share(account)
            req.beyond_share = shares.beyond(account, placed.position)

    req.on_answer = answered
