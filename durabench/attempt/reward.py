"""Reading the verifier's reward: a number, or an error that says what was wrong."""

from __future__ import annotations

from durabench.errors import RewardParseError

__all__ = ["parse_reward"]


def parse_reward(text: str, *, where: str) -> float:
    """The reward in ``text`` (the reward file's content), read from ``where``.

    Raises:
        RewardParseError: ``text`` is not a number.
    """
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        raise RewardParseError(f"{where} holds {text[:80]!r}, not a number") from None
