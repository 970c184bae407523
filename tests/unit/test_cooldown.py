"""Reset times read from agents' usage-cap messages, and the cooldown built on them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from durabench.accounts import cooldown
from durabench.accounts.cooldown import cooldown_until, reset_time

NOW = datetime(2025, 6, 3, 14, 0, tzinfo=UTC)
"""A Tuesday; 16:00 in Berlin (CEST, UTC+2), 10:00 in New York (EDT, UTC-4)."""

DEFAULT = timedelta(minutes=30)


def utc(month: int, day: int, hour: int, minute: int = 0, year: int = 2025) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # time of day with a zone: the next occurrence at or after NOW
        ("5-hour limit reached ∙ resets 5:30pm (UTC)", utc(6, 3, 17, 30)),
        ("You've hit your limit · resets 5pm (America/New_York)", utc(6, 3, 21)),
        ("resets 17:30 (Europe/Berlin)", utc(6, 3, 15, 30)),
        ("resets 4pm (Europe/Berlin)", utc(6, 3, 14)),  # exactly NOW counts as at/after
        # rollover: the time has passed today
        ("resets 3:30pm (Europe/Berlin)", utc(6, 3, 13, 30)),  # 30 min past: today's
        ("resets 9am (UTC)", utc(6, 4, 9)),
        ("resets 12am (UTC)", utc(6, 4, 0)),
        # month day + time + zone
        ("resets Jun 5 at 4pm (Europe/Berlin)", utc(6, 5, 14)),
        ("resets Jun 10, 4pm (UTC)", utc(6, 10, 16)),
        ("Opus weekly limit reached ∙ resets June 7, 9:15am (America/New_York)", utc(6, 7, 13, 15)),
        ("resets Dec 1, 9am (Europe/Berlin)", utc(12, 1, 8)),  # CET, UTC+1
        ("resets Jan 3 at 9am (UTC)", utc(1, 3, 9, year=2026)),  # past this year: next year
        ("resets Jun 3, 1pm (UTC)", utc(6, 3, 13)),  # under a day past: kept
        ("try again at Jun 5th, 2025 4:15 PM.", utc(6, 5, 16, 15)),
        ("try again at Jul 1st, 2025 12:05 AM.", utc(7, 1, 0, 5)),
        # no zone: UTC
        ("You've hit your usage limit. Try again at 4:45 PM.", utc(6, 3, 16, 45)),
        ("or try again at 12:16 PM.", utc(6, 3, 12, 16)),  # under 2 hours past: today's
        ("try again at 4:45 p.m.", utc(6, 3, 16, 45)),
        ("try again at 11:05AM", utc(6, 4, 11, 5)),
        ("try again at 23:10", utc(6, 3, 23, 10)),
        # unknown zone: UTC
        ("resets 5pm (Mars/Olympus_Mons)", utc(6, 3, 17)),
        # relative
        ("Try again in 5 minutes.", utc(6, 3, 14, 5)),
        ("limit resets in 2 hours", utc(6, 3, 16)),
        ("try again in 1h 30m", utc(6, 3, 15, 30)),
        ("try again in 1h30m", utc(6, 3, 15, 30)),
        ("try again in 2 days 3 hours 38 minutes.", utc(6, 5, 17, 38)),
        ("retry in 1 hour and 45 mins", utc(6, 3, 15, 45)),
        ("try again in 90 seconds", datetime(2025, 6, 3, 14, 1, 30, tzinfo=UTC)),
        ("Suggested retry after 7200s.", utc(6, 3, 16)),  # Gemini CLI's terminal quota
        # epoch seconds
        ("Claude AI usage limit reached|1748966400", utc(6, 3, 16)),
        ("Claude AI usage limit reached | 1749000000", utc(6, 4, 1, 20)),
        # case
        ("RESETS 5:30PM (UTC)", utc(6, 3, 17, 30)),
        ("TRY AGAIN IN 5 MINUTES", utc(6, 3, 14, 5)),
    ],
)
def test_reset_time_reads_each_form(message: str, expected: datetime) -> None:
    found = reset_time(message, NOW)
    assert found == expected
    assert found is not None and found.tzinfo is UTC


def test_rollover_across_a_dst_change_keeps_the_local_time() -> None:
    # Saturday 13:00 CET; 9am has passed, and Sunday 9am is CEST (clocks went forward).
    now = datetime(2025, 3, 29, 12, 0, tzinfo=UTC)
    assert reset_time("resets 9am (Europe/Berlin)", now) == utc(3, 30, 7)


def test_now_in_another_zone_gives_the_same_utc_reset() -> None:
    berlin_now = NOW.astimezone(ZoneInfo("Europe/Berlin"))
    found = reset_time("resets 5:30pm (UTC)", berlin_now)
    assert found == utc(6, 3, 17, 30)
    assert found is not None and found.tzinfo is UTC


def test_the_message_is_found_in_longer_stderr_with_colour_codes() -> None:
    stderr = (
        "\x1b[2mnpm warn deprecated inflight@1.0.6\x1b[0m\n"
        "Task finished in 12 minutes\n"
        "\x1b[31mError:\x1b[0m 5-hour limit reached ∙ resets \x1b[1m5:30pm\x1b[22m (UTC)\n"
        "    at main (cli.js:1:1)\n"
    )
    assert reset_time(stderr, NOW) == utc(6, 3, 17, 30)


@pytest.mark.parametrize(
    "message",
    [
        "",
        "You've hit your usage limit. Try again later.",
        "Claude usage limit reached. Your limit will reset soon.",
        "The task completed in 5 minutes",  # no reset wording before "in"
        "resets 5 (UTC)",  # a bare number is no time of day
        "resets 25:00 (UTC)",
        "resets 13pm (UTC)",
        "resets 5:75pm (UTC)",
        "resets Jun 31 at 4pm (UTC)",
        "try again in 0 minutes",
        "usage limit reached|17489",
    ],
)
def test_unparseable_messages_give_none_and_the_default_cooldown(message: str) -> None:
    assert reset_time(message, NOW) is None
    assert cooldown_until(message, NOW, DEFAULT) == NOW + DEFAULT


@pytest.mark.parametrize(
    "message",
    [
        "try again at Jun 1st, 2025 4:15 PM.",  # dated, two days ago
        "Claude AI usage limit reached|1700000000",  # 2023
        "try again in 9 days",
        "resets Jun 20, 4pm (UTC)",
    ],
)
def test_a_reset_in_the_past_or_over_8_days_ahead_falls_back_to_the_default(
    message: str,
) -> None:
    assert reset_time(message, NOW) is not None
    assert cooldown_until(message, NOW, DEFAULT) == NOW + DEFAULT


def test_cooldown_until_is_the_reset_time_when_it_is_in_range() -> None:
    assert cooldown_until("resets Jun 10, 4pm (UTC)", NOW, DEFAULT) == utc(6, 10, 16)
    assert cooldown_until("try again in 7 days", NOW, DEFAULT) == utc(6, 10, 14)


def test_cooldown_until_answers_in_utc_for_a_now_in_another_zone() -> None:
    berlin_now = NOW.astimezone(ZoneInfo("Europe/Berlin"))
    until = cooldown_until("no time here", berlin_now, DEFAULT)
    assert until == NOW + DEFAULT
    assert until.tzinfo is UTC


def test_a_naive_now_is_refused() -> None:
    naive = datetime(2025, 6, 3, 14, 0)  # noqa: DTZ001 - the naive value is the point
    with pytest.raises(ValueError, match="timezone-aware"):
        reset_time("resets 5pm (UTC)", naive)
    with pytest.raises(ValueError, match="timezone-aware"):
        cooldown_until("resets 5pm (UTC)", naive, DEFAULT)


def test_public_names() -> None:
    assert cooldown.__all__ == ["cooldown_until", "reset_time"]


# --- the shared real transcripts ------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_the_shared_usage_cap_transcripts_name_a_readable_reset(shared_fixtures: Path) -> None:
    root = shared_fixtures / "classify"
    cases = json.loads((root / "cases.json").read_text())
    capped = [case for case in cases if case["expected_exit_class"] == "infra_usage_cap"]
    if not capped:
        pytest.skip("the shared cases have no usage-cap transcript")
    unread = []
    for case in capped:
        lines = (root / case["transcript"]).read_text().splitlines()
        texts = [text for line in lines if line.strip() for text in _strings(json.loads(line))]
        named = [text for text in texts if "reset" in text.lower() or "again" in text.lower()]
        if not named or any(reset_time(text, NOW) is None for text in named):
            unread.append(case["name"])
    assert unread == []


@pytest.mark.parametrize("message", ["resets Jun 3, 1pm (UTC)", "try again at 12:16 PM"])
def test_a_reset_reached_within_two_hours_means_no_cooldown(message: str) -> None:
    assert cooldown_until(message, NOW, DEFAULT) == NOW


def test_a_reset_just_before_midnight_read_just_after_means_no_cooldown() -> None:
    after_midnight = datetime(2025, 6, 4, 0, 15, tzinfo=UTC)
    assert reset_time("resets 11:30pm (UTC)", after_midnight) == utc(6, 3, 23, 30)
    assert cooldown_until("resets 11:30pm (UTC)", after_midnight, DEFAULT) == after_midnight
