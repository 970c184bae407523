"""What an API answer says is left of an account's rate limits, read strictly.

The gateway reads every answer's rate-limit headers (Anthropic's, OpenAI's) and Gemini's
quota errors into one reading per account and model. The values pass proxies and every
attempt's answers feed the parser, so whatever they hold, it never raises and never
believes a number that is not plainly one (a property over arbitrary headers).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.gateway.meter import ResponseMeter
from durabench.gateway.room import FULL_DEFAULT, MAX_WAIT, parse_duration, read_room
from durabench.models.room import Bucket

NOW = datetime(2026, 11, 29, 11, 0, tzinfo=UTC)
A = "anthropic-ratelimit-"


def test_anthropic_headers_give_each_limit_its_remaining_and_reset() -> None:
    headers = {
        f"{A}requests-limit": "30",
        f"{A}requests-remaining": "12",
        f"{A}requests-reset": "2026-11-29T11:00:20Z",
        f"{A}input-tokens-limit": "30000",
        f"{A}input-tokens-remaining": "29000",
        f"{A}input-tokens-reset": "2026-11-29T11:00:02Z",
        f"{A}output-tokens-limit": "8000",
        f"{A}output-tokens-remaining": "8000",
    }
    reading = read_room("anthropic", "team-a", "claude-haiku-4-5", 200, headers, NOW)
    assert reading is not None
    assert reading.requests == Bucket(limit=30, remaining=12, reset_at=NOW + timedelta(seconds=20))
    assert reading.input_tokens == Bucket(
        limit=30000, remaining=29000, reset_at=NOW + timedelta(seconds=2)
    )
    assert reading.output_tokens == Bucket(limit=8000, remaining=8000)
    assert reading.full_until is None
    assert reading.key() == ("team-a", "claude-haiku-4-5")


def test_openai_headers_and_durations() -> None:
    headers = {
        "X-RateLimit-Limit-Requests": "500",
        "x-ratelimit-remaining-requests": "499",
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-remaining-tokens": "100",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    reading = read_room("openai", "", "gpt-5", 200, headers, NOW)
    assert reading is not None and reading.requests is not None
    assert reading.requests.reset_at == NOW + timedelta(milliseconds=120)
    assert reading.input_tokens == Bucket(
        limit=30000, remaining=100, reset_at=NOW + timedelta(minutes=6)
    )


def test_a_429_says_full_until_its_retry_after_or_the_spent_limits_reset() -> None:
    spent = {
        f"{A}requests-limit": "30",
        f"{A}requests-remaining": "0",
        f"{A}requests-reset": "2026-11-29T11:00:07Z",
    }
    told = read_room("anthropic", "a", "m", 429, {**spent, "retry-after": "3"}, NOW)
    assert told is not None and told.full_until == NOW + timedelta(seconds=3)
    by_reset = read_room("anthropic", "a", "m", 429, spent, NOW)
    assert by_reset is not None and by_reset.full_until == NOW + timedelta(seconds=7)
    bare = read_room("anthropic", "a", "m", 429, {}, NOW)
    assert bare is not None and bare.full_until == NOW + FULL_DEFAULT
    assert read_room("anthropic", "a", "m", 200, {}, NOW) is None  # nothing said


def test_a_gemini_quota_error_waits_its_retry_delay() -> None:
    body = (
        b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": ['
        b'{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},'
        b'{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"}]}}'
    )
    meter = ResponseMeter("gemini", "application/json")
    meter.feed(body)
    usage = meter.usage()
    assert (usage.error, meter.retry_delay) == ("RESOURCE_EXHAUSTED", "26s")
    reading = read_room(
        "gemini", "g", "gemini-2.5-pro", 429, {}, NOW, error=usage.error, retry_delay="26s"
    )
    assert reading is not None and reading.full_until == NOW + timedelta(seconds=26)


def test_values_that_are_not_plainly_numbers_are_ignored() -> None:
    for limit, remaining in [
        ("30", "31"),  # more left than the limit
        ("0", "0"),
        ("-30", "3"),
        ("３０", "3"),  # full-width digits
        ("30", "²"),
        ("30, 30", "3"),  # a header sent twice, joined
        ("9" * 40, "3"),
        ("1e3", "3"),
    ]:
        headers = {f"{A}requests-limit": limit, f"{A}requests-remaining": remaining}
        assert read_room("anthropic", "a", "m", 200, headers, NOW) is None, (limit, remaining)
    far = {
        f"{A}requests-limit": "30",
        f"{A}requests-remaining": "3",
        f"{A}requests-reset": "2099-01-01T00:00:00Z",
    }
    reading = read_room("anthropic", "a", "m", 200, far, NOW)
    assert reading is not None and reading.requests == Bucket(limit=30, remaining=3)


def test_durations() -> None:
    assert parse_duration("6m0s") == timedelta(minutes=6)
    assert parse_duration("1.5s") == timedelta(seconds=1.5)
    assert parse_duration("20ms") == timedelta(milliseconds=20)
    assert parse_duration("1h") == MAX_WAIT
    assert parse_duration("30") == timedelta(seconds=30)
    for bad in ["", "s", "2h", "1d", "-1s", "1.5.5s", "NaNs", "inf", "1e9s", "٣s"]:
        assert parse_duration(bad) is None, bad


_NAMES = st.sampled_from(
    [
        f"{A}{kind}-{part}"
        for kind in ("requests", "input-tokens", "output-tokens", "tokens")
        for part in ("limit", "remaining", "reset")
    ]
    + [
        f"x-ratelimit-{part}-{kind}"
        for kind in ("requests", "tokens")
        for part in ("limit", "remaining", "reset")
    ]
    + ["retry-after", "Retry-After", "x-other"]
)
_VALUES = st.one_of(
    st.text(max_size=80),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.sampled_from(["6m0s", "1.5s", "20ms", "Mon, 01 Jan 2001 00:00:00 GMT", "0", "1h2m3s"]),
)


@settings(max_examples=400, deadline=None)
@given(
    provider=st.sampled_from(["anthropic", "openai", "gemini"]),
    status=st.sampled_from([200, 429, 500]),
    headers=st.dictionaries(_NAMES, _VALUES, max_size=12),
    error=st.sampled_from(["", "RESOURCE_EXHAUSTED", "rate_limit_error"]),
    delay=st.one_of(st.text(max_size=40), st.sampled_from(["26s", "0.5s", "99999999s"])),
)
def test_any_headers_give_a_sound_reading_or_none(
    provider: str, status: int, headers: dict[str, str], error: str, delay: str
) -> None:
    """Whatever the headers hold: no exception, and every bucket and wait is sound."""
    reading = read_room(provider, "a", "m", status, headers, NOW, error=error, retry_delay=delay)
    if reading is None:
        return
    for bucket in reading.buckets():
        assert 0 <= bucket.remaining <= bucket.limit
        assert bucket.reset_at is None or NOW <= bucket.reset_at <= NOW + MAX_WAIT
    if reading.full_until is not None:
        assert NOW <= reading.full_until <= NOW + MAX_WAIT
        assert status == 429 or error == "RESOURCE_EXHAUSTED"
    else:
        assert status != 429


def test_a_wait_past_an_hour_is_the_hour_whatever_its_form() -> None:
    """A retry-after of 2 h in seconds (or Gemini's ``7200s``) holds an hour, not 10 s."""
    for headers, delay in [
        ({"retry-after": "7200"}, ""),
        ({"retry-after": "9" * 18}, ""),
        ({"retry-after": format_datetime(NOW + timedelta(hours=2), usegmt=True)}, ""),
        ({}, "7200s"),
        ({}, "99999999s"),
        ({}, "3h"),
    ]:
        reading = read_room(
            "gemini", "g", "m", 429, headers, NOW, error="RESOURCE_EXHAUSTED", retry_delay=delay
        )
        assert reading is not None and reading.full_until == NOW + MAX_WAIT, (headers, delay)


_LATEST = int((datetime(9999, 12, 31, tzinfo=UTC) - NOW).total_seconds())


@settings(max_examples=300, deadline=None)
@given(seconds=st.one_of(st.integers(0, 4 * 3600), st.integers(0, _LATEST)))
def test_a_retry_after_in_seconds_or_as_a_date_or_a_retry_delay_waits_alike(
    seconds: int,
) -> None:
    """Every form of the same wait gives the same ``full_until``, long waits included."""
    said = [
        read_room("anthropic", "a", "m", 429, {"retry-after": str(seconds)}, NOW),
        read_room(
            "anthropic",
            "a",
            "m",
            429,
            {"retry-after": format_datetime(NOW + timedelta(seconds=seconds), usegmt=True)},
            NOW,
        ),
        read_room("gemini", "a", "m", 429, {}, NOW, retry_delay=f"{seconds}s"),
    ]
    expected = NOW + min(timedelta(seconds=seconds), MAX_WAIT)
    for reading in said:
        assert reading is not None and reading.full_until is not None
        assert abs(reading.full_until - expected) <= timedelta(seconds=1), reading
