"""When a limited account may be asked again, from what the API itself answered.

The gateway keeps the last response's ``retry-after`` and rate-limit reset headers
(Anthropic's ``anthropic-ratelimit-*-reset``, RFC 3339 times or, for a plan's unified
limit, epoch seconds; OpenAI's ``x-ratelimit-reset-*``, durations such as ``6m0s`` or
``1.5s``). Those are the model API's words, outside the sandbox; nothing the agent printed
is read. A rate limit is short by nature, so what they say is capped at :data:`MAX_WAIT`;
a usage cap at a ceiling the operator sets (a week-long reset would starve a run).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from durabench.documents import loads_json
from durabench.models.verdict import MeteredUsage
from durabench.numerals import read_int

__all__ = ["MAX_WAIT", "rate_limit_until", "usage_cap_until"]

MAX_WAIT = timedelta(hours=1)
"""The longest a rate limit cools an account; longer waits are usage caps."""
_FURTHEST = timedelta(days=36500)
"""No wait is read as longer: a number past it is past every ceiling (and past what a
``timedelta`` holds, ``1e20`` seconds or ``inf``, which must cool, not raise)."""
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?")


def rate_limit_until(metered: MeteredUsage, now: datetime) -> datetime | None:
    """When the API said to come back, or ``None`` when it did not say."""
    waits = [w for w in (_retry_after(metered.last_retry_after, now), *_resets(metered, now)) if w]
    if not waits:
        return None
    return now + min(max(waits), MAX_WAIT)


def usage_cap_until(
    metered: MeteredUsage, now: datetime, default: timedelta, ceiling: timedelta
) -> datetime:
    """Until when to cool an account the API refused for its usage limit.

    The latest time its headers name, else ``default``; never more than ``ceiling`` ahead.
    """
    waits = [w for w in (_retry_after(metered.last_retry_after, now), *_resets(metered, now)) if w]
    return now + min(max(waits) if waits else default, ceiling)


def _retry_after(value: str, now: datetime) -> timedelta | None:
    value = value.strip()
    if not value:
        return None
    try:
        return _seconds(max(0.0, float(value)))
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value) - now
    except (TypeError, ValueError):
        return None


def _resets(metered: MeteredUsage, now: datetime) -> list[timedelta]:
    try:
        headers = loads_json(metered.last_resets) if metered.last_resets else {}
    except ValueError:
        return []
    waits = []
    for name, value in headers.items() if isinstance(headers, dict) else ():
        if not str(name).lower().endswith("reset") and "reset-" not in str(name).lower():
            continue
        wait = _when(str(value).strip(), now)
        if wait is not None and wait > timedelta(0):
            waits.append(wait)
    return waits


def _when(value: str, now: datetime) -> timedelta | None:
    epoch = read_int(value) if len(value) in (10, 11) else None
    if epoch is not None:  # epoch seconds (a plan's unified reset)
        return datetime.fromtimestamp(epoch, tz=UTC) - now
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) - now
    except ValueError:
        pass
    match = _DURATION.fullmatch(value)
    if not match or not any(match.groups()):
        return None
    h, m, s, ms = (float(g) if g else 0.0 for g in match.groups())
    return _seconds(h * 3600 + m * 60 + s + ms / 1000)


def _seconds(seconds: float) -> timedelta:
    """``seconds`` as a wait, at most :data:`_FURTHEST` (``nan``: none)."""
    if math.isnan(seconds):
        return timedelta(0)
    return timedelta(seconds=min(seconds, _FURTHEST.total_seconds()))
