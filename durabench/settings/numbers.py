"""The ranges a number setting or option may take, declared once for settings and the CLI.

A setting is text a person typed (config.toml, the environment, a flag): ``nan`` and
``inf`` parse as floats, and ``99999999999`` as an int, yet none means anything here. A
NaN compares false with everything, so a pass threshold of NaN passes nothing and says so
in the report; an infinity or a huge number overflows a socket's port, a ``timedelta`` or
Temporal's 64-bit durations far from where it was typed. Every number is refused where it
is read, in the line that names the setting or the flag.
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field

__all__ = ["MAX_NUMBER", "PassThreshold", "Port", "number_problem"]

MAX_NUMBER = 1_000_000_000
"""The largest number any setting or option takes: a billion (seconds are 31 years, MiB a
petabyte, tokens a thousand times any attempt's); what is past it is a typo, and stays
inside a ``timedelta``, Docker's nano-CPUs and Temporal's int64 fields."""

Port = Annotated[int, Field(ge=1, le=65535)]
"""A TCP port to listen on or connect to."""

PassThreshold = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
"""A lane passes a task when its mean reward is at least this; rewards are 0 to 1."""


def number_problem(value: float) -> str | None:
    """What is wrong with ``value`` as a setting, or ``None``: not finite, or past a billion."""
    if not math.isfinite(value):
        return f"{value} is not a number a setting takes; give a finite number"
    if abs(value) > MAX_NUMBER:
        return (
            f"{value:g} is past any setting (at most {MAX_NUMBER:,} in size); give the number meant"
        )
    return None
