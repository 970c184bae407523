"""Reading the verifier's reward: a number, or an error that says what was wrong.

The reward file is written in a container the agent worked in (a ``conftest.py`` of its
can make the verifier write anything there, a key included), so an error describes it
and never quotes it. A reward is a share of the task passed, so one outside [0, 1] is no
reward at all: code the tests import could write a million, and a lane's mean with it.
"""

from __future__ import annotations

import math

from durabench.errors import RewardParseError
from durabench.wording import counted

__all__ = ["parse_reward"]


def parse_reward(text: str, *, where: str) -> float:
    """The reward in ``text`` (the reward file's content), read from ``where``.

    Raises:
        RewardParseError: ``text`` is not a number, or not one in [0, 1].
    """
    text = text.strip()
    try:
        reward = float(text)
    except ValueError:
        raise RewardParseError(f"{where} {_describe(text)}, not a number") from None
    if not math.isfinite(reward):
        raise RewardParseError(f"{where} is infinite or not a number; a reward is finite")
    if not 0.0 <= reward <= 1.0:
        raise RewardParseError(f"{where} is outside [0, 1]; a reward is a share of the task passed")
    return reward


def _describe(text: str) -> str:
    """What the text is like, without a character of it."""
    if not text:
        return "is empty"
    lines = text.count("\n") + 1
    return f"holds {counted(len(text), 'character')} on {counted(lines, 'line')}"
