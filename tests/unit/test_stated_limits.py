"""The plan's rate-limit bound: the API's own stated limits when the pool has read them,
else the table, labelled as the first guess it is."""

from __future__ import annotations

from datetime import UTC, datetime

from durabench.models.parallelism import ModelRateLimit
from durabench.models.room import Bucket, RoomReading, RoomState
from durabench.planning.parallelism import rate_limit_bound, stated_limit

SESSION = ModelRateLimit(rpm=10, tpm=100_000)
SEEN = datetime(2026, 11, 29, 11, 2, tzinfo=UTC)


def _room(account: str, rpm: int, tpm: int, model: str = "claude-haiku-4-5") -> RoomState:
    reading = RoomReading(
        provider="anthropic",
        account=account,
        model=model,
        observed_at=SEEN,
        requests=Bucket(limit=rpm, remaining=rpm),
        input_tokens=Bucket(limit=tpm, remaining=tpm),
    )
    return RoomState(account=account, model=model, latest=reading)


def test_the_apis_stated_limits_win_over_the_tables_first_guess() -> None:
    rooms = [_room("a", 60, 400_000), _room("b", 30, 900_000), _room("other", 5, 5)]
    stated = stated_limit(rooms, ["a", "b"], "claude-haiku-4-5-20251001")
    assert stated == (
        ModelRateLimit(rpm=30, tpm=900_000),
        "stated by the API for account b at 11:02 UTC",
    )
    bound = rate_limit_bound("claude-haiku-4-5", 2, {}, SESSION, stated)
    # 30 rpm / 10 = 3 sessions; 900,000 tpm / 100,000 = 9: 3 sessions, 1 pair of 2 lanes
    assert bound.pairs == 1
    assert bound.detail.startswith("claude-haiku-4-5 (stated by the API for account b at 11:02")
    guess = rate_limit_bound("claude-haiku-4-5", 2, {}, SESSION)
    assert guess.pairs == 20 and "(first guess: published limits)" in guess.detail


def test_readings_of_other_models_or_accounts_or_without_both_limits_state_nothing() -> None:
    partial = _room("a", 60, 400_000).model_copy(
        update={
            "latest": RoomReading(
                provider="anthropic",
                account="a",
                model="claude-haiku-4-5",
                observed_at=SEEN,
                requests=Bucket(limit=60, remaining=1),
            )
        }
    )
    assert stated_limit([partial], ["a"], "claude-haiku-4-5") is None
    assert stated_limit([_room("a", 60, 1, model="gpt-5")], ["a"], "claude-haiku-4-5") is None
    assert stated_limit([_room("z", 60, 400_000)], ["a"], "claude-haiku-4-5") is None
