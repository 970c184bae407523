"""When an agent account's usage cap resets, read from the agent's usage-cap message.

The account pool cools an account that hit its cap until the cap resets, so a retry of the
attempt goes to another account instead of failing the same way. Agent CLIs name the reset
time in their message; this module reads it. It is pure: no I/O and no clock reads, the
caller passes ``now``. A message it cannot read gives ``None`` from :func:`reset_time`, and
:func:`cooldown_until` then uses the caller's default cooldown (a setting).

Forms read (case-insensitive, anywhere in longer text; ANSI colour codes are ignored):

- ``usage limit reached|1748966400``: epoch seconds (Claude Code).
- ``resets 5:30pm (UTC)``, ``resets 17:30 (Europe/Berlin)``, ``try again at 12:16 PM``: a
  time of day in the zone: today's, if that is later or less than 2 hours past (the
  message is read a while after it was printed), else tomorrow's.
- ``resets Jun 3 at 4pm (Europe/Berlin)``, ``resets Jun 3, 4pm (UTC)``,
  ``try again at Jun 3rd, 2025 4:15 PM``: a date and time; without a year, this year, or
  next year when that is more than a day before ``now``.
- ``try again in 5 minutes``, ``resets in 2 hours``, ``try again in 1h 30m``, ``retry
  after 7200s`` (Gemini CLI's quota error): relative to ``now``.

Zones: a time without a zone is read in UTC (agents run in containers on UTC; Codex prints
container-local time). An unknown zone name is read as UTC too, rather than dropping a time
that is most likely right to within the zone's offset.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["cooldown_until", "reset_time"]

_MAX_AHEAD = timedelta(days=8)
"""Caps reset within a week; a later reset is taken as misread."""
_RECENT = timedelta(hours=2)
"""A time of day this recently past is today's, already reached: the message is read
after the session ended (after the verifier), and the cap may have reset meanwhile."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_EPOCH = re.compile(r"limit reached\s*\|\s*(\d{10})(?!\d)", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ABSOLUTE = re.compile(
    r"\b(?:resets?|again|available)\s+(?:at\s+|on\s+)?"
    rf"(?:(?P<month>{'|'.join(_MONTHS)})[a-z]*\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?"
    r"(?:\s+(?P<year>\d{4}),?)?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?!\d)(?::(?P<minute>\d{2}))?(?:\s*(?P<ampm>[ap])\.?\s?m\b\.?)?"
    r"(?:\s*\(\s*(?P<zone>[^()\s]+)\s*\))?",
    re.IGNORECASE,
)
_RELATIVE = re.compile(
    r"\b(?:again|resets?|retry|available)\s+(?:in|after)\s+"
    r"((?:\d+\s*[a-z]+(?:\s*,\s*|\s+and\s+|\s*))+)",
    re.IGNORECASE,
)
_PART = re.compile(
    r"(\d+)\s*(?:(d)(?:ays?)?|(h)(?:ours?|rs?)?|(m)(?:in(?:ute)?s?)?|(s)(?:ec(?:ond)?s?)?)(?![a-z])",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def reset_time(message: str, now: datetime) -> datetime | None:
    """The time at which the usage cap named in ``message`` resets.

    Args:
        message: The agent's usage-cap message, alone or inside longer output.
        now: The current time, timezone-aware; time-of-day forms resolve relative to it.

    Returns:
        The reset time, timezone-aware in UTC, or ``None`` when no form above matches. A
        date form may give a time before ``now`` (up to a day); range checks are left to
        :func:`cooldown_until`.

    Raises:
        ValueError: If ``now`` is naive.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware (e.g. datetime.now(UTC))")
    text = _ANSI.sub("", message)
    if epoch := _EPOCH.search(text):
        return datetime.fromtimestamp(int(epoch.group(1)), tz=UTC)
    for match in _ABSOLUTE.finditer(text):
        found = _absolute(match, now)
        if found is not None:
            return found
    if relative := _RELATIVE.search(text):
        seconds = sum(
            int(part[0]) * _UNIT_SECONDS["".join(part[1:]).lower()]
            for part in _PART.findall(relative.group(1))
        )
        if seconds > 0:
            return (now + timedelta(seconds=seconds)).astimezone(UTC)
    return None


def cooldown_until(message: str, now: datetime, default: timedelta) -> datetime:
    """Until when to cool an account that printed ``message``.

    Args:
        message: The agent's usage-cap message, alone or inside longer output.
        now: The current time, timezone-aware.
        default: The cooldown when the message names no usable reset time.

    Returns:
        :func:`reset_time` in UTC; ``now`` when that passed within the last 2 hours (the
        cap has reset: no cooldown); ``now + default`` when the message names no time, or
        one further past or more than 8 days ahead (taken as misread).

    Raises:
        ValueError: If ``now`` is naive.
    """
    reset = reset_time(message, now)
    if reset is None or reset < now - _RECENT or reset > now + _MAX_AHEAD:
        return (now + default).astimezone(UTC)
    return max(reset, now.astimezone(UTC))


def _absolute(match: re.Match[str], now: datetime) -> datetime | None:
    """The UTC time a matched ``resets …``/``again at …`` names, or None if out of range."""
    hour, minute, ampm = int(match["hour"]), int(match["minute"] or 0), match["ampm"]
    if match["minute"] is None and ampm is None:
        return None  # a bare number ("resets 5") is no time of day
    if ampm is not None:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
    if hour > 23 or minute > 59:
        return None
    zone = _zone(match["zone"])
    local_now = now.astimezone(zone)
    at = time(hour, minute)
    if match["month"] is None:
        for days in (-1, 0, 1):  # yesterday's, read just after midnight, may be recent
            found = datetime.combine(local_now.date() + timedelta(days=days), at, zone)
            if found >= now - _RECENT:
                return found.astimezone(UTC)
        return None
    month = _MONTHS.index(match["month"][:3].lower()) + 1
    year = int(match["year"] or local_now.year)
    try:
        found = datetime.combine(date(year, month, int(match["day"])), at, zone)
        if match["year"] is None and found < now - timedelta(days=1):
            found = datetime.combine(date(year + 1, month, int(match["day"])), at, zone)
    except ValueError:
        return None  # no such day (Jun 31, Feb 29 of a common year)
    return found.astimezone(UTC)


def _zone(name: str | None) -> tzinfo:
    """The zone named in parentheses; UTC when none is named or the name is unknown."""
    if name is None or name.upper() in ("UTC", "GMT", "Z"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return UTC
