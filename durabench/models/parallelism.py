"""How many pairs a run keeps in flight, and where that number came from.

A run that is not told ``--parallel`` takes the least of what its sources allow: the
account slots it may lease, the sandboxes its backend admits, the model's rate limits.
The plan keeps each source with its number, so a person approving it sees which one
bound the run, and ``plan.json`` keeps the same record.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from durabench.settings.rate_limits import ModelRateLimit

__all__ = ["ModelRateLimit", "ParallelBound", "ParallelSource", "Parallelism"]

ParallelSource = Literal["accounts", "sandboxes", "rate limits"]
"""What can bound the pairs in flight."""


class ParallelBound(BaseModel):
    """What one source allows: pairs in flight, and how that follows from its facts."""

    model_config = ConfigDict(frozen=True)

    source: ParallelSource
    """Which source."""
    pairs: int | None
    """Pairs it allows at once; ``None``: it sets no bound (nothing is known of it)."""
    detail: str
    """How the number follows from the source's facts, in words, for the plan."""


class Parallelism(BaseModel):
    """The run's parallel slots and their derivation, as the plan shows them."""

    model_config = ConfigDict(frozen=True)

    parallel: int = Field(ge=1)
    """Pairs in flight at once, as planned (``set-parallel`` changes it live)."""
    bounds: tuple[ParallelBound, ...] = ()
    """Every source asked, known or not."""
    bound_by: ParallelSource | None = None
    """The source whose bound was taken; ``None`` when none set one (the default was
    taken) or ``--parallel`` was given."""
    overridden: bool = False
    """Whether ``--parallel`` gave the number instead."""
    derived: int | None = None
    """The least of the bounds, taken or not; ``None`` when no source set one."""
