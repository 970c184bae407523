"""Whether an attempt's end cools its account, and until when: from the API's answers only.

The account pool cools an account the model API refused for a limit, so the retry goes to
another account instead of failing the same way. How long comes from the gateway's ledger
(the API's ``retry-after`` and reset headers, :mod:`durabench.accounts.rate_limits`),
never from text the agent printed: a final message "resets Dec 3 at 4pm" is the agent's
to write, and believing it let one attempt starve a shared account for a week. A usage
cap cools for at most the operator's ceiling (``DURABENCH_USAGE_CAP_COOLDOWN_MAX_SEC``),
and for the default (``DURABENCH_USAGE_CAP_COOLDOWN_SEC``) when the API named no time.
It is pure: the caller passes ``now``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from durabench.accounts.rate_limits import rate_limit_until, usage_cap_until
from durabench.models.verdict import MeteredUsage

__all__ = ["account_cooldown"]


def account_cooldown(
    exit_class: str,
    metered: MeteredUsage | None,
    now: datetime,
    default: timedelta,
    ceiling: timedelta,
) -> datetime | None:
    """Until when the attempt's account cools; ``None``: it does not.

    Args:
        exit_class: The attempt's class; only ``infra_usage_cap`` and ``infra_rate_limit``
            cool (the classifier gives them only on the API's own 429 in the ledger).
        metered: The gateway's ledger of the attempt.
        now: The current time, timezone-aware.
        default: A usage cap's cooldown when the API named no reset.
        ceiling: The longest a usage cap cools.

    Raises:
        ValueError: If ``now`` is naive.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware (e.g. datetime.now(UTC))")
    now = now.astimezone(UTC)
    if exit_class == "infra_usage_cap":
        if metered is None:
            return now + min(default, ceiling)
        return usage_cap_until(metered, now, default, ceiling)
    if exit_class == "infra_rate_limit" and metered is not None:
        return rate_limit_until(metered, now)
    return None
