"""A rate-limited account cools for as long as the API said, and no longer than an hour."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.accounts.rate_limits import MAX_WAIT, rate_limit_until, usage_cap_until
from durabench.models.verdict import MeteredUsage

NOW = datetime(2026, 11, 26, 15, 0, tzinfo=UTC)


def _m(retry_after: str = "", **resets: str) -> MeteredUsage:
    return MeteredUsage(
        requests=3,
        last_status=429,
        last_retry_after=retry_after,
        last_resets=json.dumps(resets) if resets else "",
    )


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert rate_limit_until(_m("30"), NOW) == NOW + timedelta(seconds=30)
    assert rate_limit_until(_m("Thu, 26 Nov 2026 15:02:00 GMT"), NOW) == NOW + timedelta(minutes=2)


def test_reset_headers_of_anthropic_and_openai() -> None:
    anthropic = _m(**{"anthropic-ratelimit-requests-reset": "2026-11-26T15:05:00Z"})
    assert rate_limit_until(anthropic, NOW) == NOW + timedelta(minutes=5)
    openai = _m(**{"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "1.5s"})
    assert rate_limit_until(openai, NOW) == NOW + timedelta(minutes=6)  # the later one


def test_nothing_said_is_none_and_a_long_wait_is_capped() -> None:
    assert rate_limit_until(_m(), NOW) is None
    assert rate_limit_until(_m("junk"), NOW) is None
    assert rate_limit_until(_m("86400"), NOW) == NOW + MAX_WAIT


# --- usage caps: the API's headers, within a ceiling; never the agent's text -------------

CAP_DEFAULT = timedelta(hours=1)
CEILING = timedelta(hours=5)


def test_a_usage_cap_cools_until_the_api_s_own_reset_within_the_ceiling() -> None:
    epoch = str(int((NOW + timedelta(hours=2)).timestamp()))
    unified = _m(**{"anthropic-ratelimit-unified-reset": epoch})
    assert usage_cap_until(unified, NOW, CAP_DEFAULT, CEILING) == NOW + timedelta(hours=2)
    week = str(int((NOW + timedelta(days=7)).timestamp()))
    far = _m(**{"anthropic-ratelimit-unified-reset": week})
    assert usage_cap_until(far, NOW, CAP_DEFAULT, CEILING) == NOW + CEILING
    assert usage_cap_until(_m("600"), NOW, CAP_DEFAULT, CEILING) == NOW + timedelta(minutes=10)


def test_a_usage_cap_the_api_named_no_reset_for_cools_for_the_default() -> None:
    assert usage_cap_until(_m(), NOW, CAP_DEFAULT, CEILING) == NOW + CAP_DEFAULT
    assert usage_cap_until(_m(), NOW, timedelta(days=9), CEILING) == NOW + CEILING


def test_a_wait_too_large_to_count_is_the_longest_not_a_crash() -> None:
    """The API's (or a proxy's) numbers past any clock cool for the cap, never raise."""
    for said in [_m("1e20"), _m("inf"), _m(**{"x-ratelimit-reset-tokens": "99999999999h"})]:
        assert rate_limit_until(said, NOW) == NOW + MAX_WAIT
        assert usage_cap_until(said, NOW, CAP_DEFAULT, CEILING) == NOW + CEILING


_HEADER_TEXT = st.one_of(
    st.text(max_size=40),
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.builds("{}h{}m{}s".format, *(st.integers(0, 10**20) for _ in range(3))),
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat()),
)


@settings(max_examples=300, deadline=None)
@given(
    retry_after=_HEADER_TEXT,
    resets=st.dictionaries(
        st.sampled_from(["anthropic-ratelimit-requests-reset", "x-ratelimit-reset-tokens"]),
        _HEADER_TEXT,
    ),
)
def test_any_header_text_cools_within_bounds(retry_after: str, resets: dict[str, str]) -> None:
    said = _m(retry_after, **resets)
    until = rate_limit_until(said, NOW)
    assert until is None or NOW < until <= NOW + MAX_WAIT
    assert NOW <= usage_cap_until(said, NOW, CAP_DEFAULT, CEILING) <= NOW + CEILING
