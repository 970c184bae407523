"""Read what an API answer says is left of the account's rate limits, strictly.

Each provider states its limits its own way:

* Anthropic: ``anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,
  reset}`` (and ``-tokens-`` for the older combined limit), resets as RFC 3339 times;
* OpenAI: ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``, resets as durations
  (``6m0s``, ``1.5s``, ``20ms``);
* Gemini: no headers; a quota it ran out of is a 429 ``RESOURCE_EXHAUSTED`` whose body's
  ``RetryInfo`` says how long to wait (``"26s"``).

A 429 from any of them also says the account is full now, until its ``retry-after`` (or
the reset of a limit that has nothing left). The values are the API's, but they pass
through proxies and reach a parser that every attempt's answers feed: anything that is
not plainly a number, a time or a duration of sensible size is ignored, and a bucket
that contradicts itself (more left than its limit) is dropped. Nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from pydantic import ValidationError

from durabench.models.room import MAX_LIMIT, Bucket, RoomReading
from durabench.numerals import read_int

__all__ = ["FULL_DEFAULT", "MAX_WAIT", "parse_duration", "read_room"]

MAX_WAIT = timedelta(hours=1)
"""The furthest ahead a reset or a wait is believed; further is a usage cap's business."""
FULL_DEFAULT = timedelta(seconds=10)
"""How long a 429 that named no time keeps new sessions off the account."""
_MAX_VALUE = 64
"""No value of these headers is longer; a longer one is not read."""
_DURATION = re.compile(
    r"(?:([0-9]{1,18})h)?(?:([0-9]{1,18})m(?!s))?(?:([0-9]{1,18}(?:\.[0-9]{1,9})?)s)?"
    r"(?:([0-9]{1,18})ms)?",
    re.ASCII,
)
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?"
    r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})",
    re.ASCII,
)
_ANTHROPIC = {
    "requests": ("requests",),
    "input_tokens": ("input-tokens", "tokens"),
    "output_tokens": ("output-tokens",),
}
_OPENAI = {"requests": ("requests",), "input_tokens": ("tokens",)}


def read_room(
    provider: str,
    account: str,
    model: str,
    status: int,
    headers: Mapping[str, str],
    now: datetime,
    *,
    error: str = "",
    retry_delay: str = "",
) -> RoomReading | None:
    """What the answer said of the account's room for ``model``; ``None``: nothing.

    Args:
        provider: The API that answered.
        account: The pool's account id (``""``: the worker's own key).
        model: The model the request asked for.
        status: The answer's HTTP status.
        headers: Its headers (any case).
        now: When it was read, timezone-aware.
        error: The error type its body named (Gemini's ``RESOURCE_EXHAUSTED``).
        retry_delay: Gemini's ``RetryInfo.retryDelay`` from its body.
    """
    lower = {str(k).lower(): str(v) for k, v in headers.items() if len(str(v)) <= _MAX_VALUE}
    if provider == "anthropic":
        buckets = {
            field: _first(lower, now, [_anthropic_names(n) for n in names])
            for field, names in _ANTHROPIC.items()
        }
    elif provider == "openai":
        buckets = {
            field: _first(lower, now, [_openai_names(n) for n in names])
            for field, names in _OPENAI.items()
        }
    else:
        buckets = {}
    full_until = _full_until(status, lower, buckets, now, error, retry_delay)
    if not any(buckets.values()) and full_until is None:
        return None
    return RoomReading(
        provider=provider,
        account=account,
        model=model,
        observed_at=now,
        full_until=full_until,
        **buckets,
    )


def _anthropic_names(kind: str) -> tuple[str, str, str]:
    base = f"anthropic-ratelimit-{kind}-"
    return base + "limit", base + "remaining", base + "reset"


def _openai_names(kind: str) -> tuple[str, str, str]:
    return f"x-ratelimit-limit-{kind}", f"x-ratelimit-remaining-{kind}", f"x-ratelimit-reset-{kind}"


def _first(
    headers: Mapping[str, str], now: datetime, names: list[tuple[str, str, str]]
) -> Bucket | None:
    """The first of ``names``' buckets the headers state whole and sound."""
    for limit_name, remaining_name, reset_name in names:
        limit = read_int(headers.get(limit_name, "").strip())
        remaining = read_int(headers.get(remaining_name, "").strip())
        if limit is None or remaining is None or not 0 < limit <= MAX_LIMIT:
            continue
        if remaining > limit:
            continue
        reset = _reset_at(headers.get(reset_name, "").strip(), now)
        try:
            return Bucket(limit=limit, remaining=remaining, reset_at=reset)
        except ValidationError:
            continue
    return None


def _reset_at(value: str, now: datetime) -> datetime | None:
    """A reset as an RFC 3339 time or a duration, within :data:`MAX_WAIT` of ``now``."""
    if not value:
        return None
    if _RFC3339.fullmatch(value):
        try:
            when = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
        except ValueError:
            return None
        return _within(when.astimezone(UTC) - now, now)
    wait = parse_duration(value)
    return _within(wait, now) if wait is not None else None


def _within(wait: timedelta, now: datetime) -> datetime | None:
    """``now + wait``, a past reset taken as now; ``None`` past :data:`MAX_WAIT`."""
    if wait > MAX_WAIT:
        return None
    return now + max(wait, timedelta(0))


def parse_duration(value: str) -> timedelta | None:
    """``6m0s``, ``1.5s``, ``20ms``, ``1h``; or plain seconds (``"30"``); else ``None``.

    ``None`` past :data:`MAX_WAIT` too: a reset that far off is not believed.
    """
    seconds = _seconds(value)
    if seconds is None or seconds > MAX_WAIT.total_seconds():
        return None
    return timedelta(seconds=seconds)


def _wait(value: str) -> timedelta | None:
    """A wait the API asked for as a duration, at most :data:`MAX_WAIT`.

    Unlike a reset, a long wait is believed, as far as it goes: two hours asked in
    seconds is the same hour as two hours asked as an HTTP date, never no wait.
    """
    seconds = _seconds(value)
    return None if seconds is None else timedelta(seconds=min(seconds, MAX_WAIT.total_seconds()))


def _seconds(value: str) -> float | None:
    """A duration (``6m0s``) or plain seconds in seconds, however large; else ``None``."""
    value = value.strip()
    seconds = read_int(value)
    if seconds is not None:
        return float(seconds)
    found = _DURATION.fullmatch(value) if len(value) <= _MAX_VALUE else None
    if found is None or not any(found.groups()):
        return None
    h, m, s, ms = (float(g) if g else 0.0 for g in found.groups())
    return h * 3600 + m * 60 + s + ms / 1000


def _retry_after(value: str, now: datetime) -> timedelta | None:
    """``retry-after``: seconds, or an HTTP date."""
    value = value.strip()
    if not value:
        return None
    wait = _wait(value)
    if wait is not None:
        return wait
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return when - now


def _full_until(
    status: int,
    headers: Mapping[str, str],
    buckets: Mapping[str, Bucket | None],
    now: datetime,
    error: str,
    retry_delay: str,
) -> datetime | None:
    """Until when a 429 (or Gemini's quota error) says the account is full."""
    if status != 429 and error != "RESOURCE_EXHAUSTED":
        return None
    waits = [
        _retry_after(headers.get("retry-after", ""), now),
        _wait(retry_delay) if retry_delay else None,
    ]
    stated = [w for w in waits if w is not None]
    if not stated:
        spent = [b.reset_at - now for b in buckets.values() if b and not b.remaining and b.reset_at]
        stated = spent or [FULL_DEFAULT]
    wait = min(max(max(stated), timedelta(0)), MAX_WAIT)
    return now + wait
