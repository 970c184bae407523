"""Each attempt's share of its account's request rate, kept by the gateway.

The model API's rate limit is the account's, shared by every attempt on it. An agent
that bursts until the API answers 429 would buy itself an excuse: ``infra_rate_limit``,
a retry, an excluded pair and a cooled account. So the gateway keeps each attempt under
its share: the account's requests-per-minute limit as the API's own headers state it
(:data:`LIMIT_HEADERS`), divided by the attempts this gateway serves on the account.

A request past its attempt's share of the last minute is refused by the gateway (429,
ledgered ``rate share``: the agent's). Until the API has stated a limit no share is
kept, so a burst sent before the first answer goes out; each request keeps its place in
its attempt's minute, and once an answer states the limit, a request placed past the
share is marked ``beyond_share`` in the ledger. A 429 that follows is the agent's doing.

One gateway serves a host, so attempts on the same account from other hosts are not
counted: the share is of what this host's attempts send.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import NamedTuple

from durabench.gateway.grants import GrantStore
from durabench.numerals import read_int

__all__ = [
    "LIMIT_HEADERS",
    "WINDOW_SEC",
    "AccountKey",
    "Admission",
    "LiveAttempts",
    "RateShares",
]

WINDOW_SEC = 60.0
"""The window the APIs state request limits for: a minute."""
LIMIT_HEADERS = ("anthropic-ratelimit-requests-limit", "x-ratelimit-limit-requests")
"""Response headers stating the account's requests per minute (Anthropic's, OpenAI's)."""

AccountKey = tuple[str, str]
"""An account as the API sees it: ``(provider, account)``, ``""`` for the worker's own key."""


class Admission(NamedTuple):
    """What the gateway decided for one request."""

    refused: bool
    """It is past its attempt's share: the gateway answers 429 itself."""
    share: int
    """The attempt's requests a minute; 0 while no limit is known."""
    position: int
    """Its place among its attempt's requests of the last minute (1: the only one)."""
    wait: float
    """Seconds until the attempt's oldest request of the minute leaves it (refused only)."""


class RateShares:
    """Limits learned per account, and each attempt's requests of the last minute."""

    def __init__(
        self,
        attempts_on: Callable[[AccountKey], int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``attempts_on``: how many attempts this gateway serves on an account."""
        self.attempts_on = attempts_on
        self.clock = clock
        self.limits: dict[AccountKey, int] = {}
        self.sent: dict[str, deque[float]] = {}

    def share(self, account: AccountKey) -> int:
        """The account's limit over its attempts (at least 1); 0 while no limit is known."""
        limit = self.limits.get(account)
        if limit is None:
            return 0
        return max(1, limit // max(1, self.attempts_on(account)))

    def admit(self, attempt: str, account: AccountKey) -> Admission:
        """Place a request in its attempt's minute, or refuse it past the share."""
        now = self.clock()
        window = self._window(attempt, now)
        share = self.share(account)
        if share and len(window) >= share:
            return Admission(True, share, len(window) + 1, window[0] + WINDOW_SEC - now)
        window.append(now)
        return Admission(False, share, len(window), 0.0)

    def learn(self, account: AccountKey, headers: Mapping[str, str]) -> None:
        """Take the account's limit from an answer's headers, when they state one."""
        for name in LIMIT_HEADERS:
            limit = read_int(str(headers.get(name, "")).strip())
            if limit is not None and limit > 0:
                self.limits[account] = limit

    def beyond(self, account: AccountKey, position: int) -> bool:
        """Whether a request placed at ``position`` is past the account's share now."""
        share = self.share(account)
        return bool(share) and position > share

    def _window(self, attempt: str, now: float) -> deque[float]:
        """The attempt's requests of the last minute (attempts gone quiet are let go)."""
        if attempt not in self.sent:
            for other in [a for a, w in self.sent.items() if not w or w[-1] <= now - WINDOW_SEC]:
                del self.sent[other]
            self.sent[attempt] = deque()
        window = self.sent[attempt]
        while window and window[0] <= now - WINDOW_SEC:
            window.popleft()
        return window


class LiveAttempts:
    """Attempts with a live grant, by account: counted from the grant store, every few seconds."""

    def __init__(
        self, store: GrantStore, every_sec: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store, self.every_sec, self.clock = store, every_sec, clock
        self.counts: dict[AccountKey, int] = {}
        self.counted_at: float | None = None

    def __call__(self, account: AccountKey) -> int:
        """How many attempts hold a grant on ``account`` (at least the one asking)."""
        now = self.clock()
        if self.counted_at is None or now - self.counted_at >= self.every_sec:
            counts: dict[AccountKey, int] = {}
            for grant in self.store.live():
                key = (grant.provider, grant.account or "")
                counts[key] = counts.get(key, 0) + 1
            self.counts, self.counted_at = counts, now
        return max(1, self.counts.get(account, 1))
