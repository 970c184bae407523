"""How much of a host's memory its sandboxes hold, and whether one more fits.

A sandbox is counted at what its cgroup holds now, measured, plus a growth allowance,
and never below its agent's floor (what that agent's process is known to grow to: a
real CLI's working set, before it has started). A sandbox not measured yet (admitted,
its image still building; or a cgroup this worker cannot read) counts at its floor or
the allowance, whichever is more. One more is admitted while everything counted, and
it, fits in the host's memory less two reserves that admission never hands out: one for
the host, the worker and its gateway, and one for the verifiers a host runs at once
(``DURABENCH_MAX_VERIFIERS`` sandboxes at their whole memory limit), since a verifier
builds and tests and may use its sandbox's whole limit.

So agents that wait on a model (a few MiB each) fill a host, while a fleet of real CLIs
is admitted at their working sets, and a verifier's peak has its room kept.
Pure: :class:`~durabench.sandbox.docker.capacity.HostCapacity` supplies the readings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["HeldMemory", "MemoryBudget", "counted_mib", "fits"]


class MemoryBudget(NamedTuple):
    """What admission may hand out on one host, in MiB."""

    usable_mib: float
    """Host memory less the host's reserve and the verifiers' headroom."""
    growth_mib: float
    """What a running sandbox may still grow by over what it holds now."""

    @classmethod
    def of(
        cls,
        host_mib: float,
        reserve_mib: float,
        verifiers: int,
        sandbox_limit_mib: float,
        growth_mib: float,
    ) -> MemoryBudget:
        """The budget of a host of ``host_mib`` keeping its reserves.

        The verifiers' room is at most half of what the host's reserve leaves: on a host
        of many CPUs (many verifiers) it would otherwise leave agents nothing.
        """
        left = max(0.0, host_mib - reserve_mib)
        verifying = min(verifiers * sandbox_limit_mib, left / 2)
        return cls(usable_mib=left - verifying, growth_mib=growth_mib)


class HeldMemory(NamedTuple):
    """One sandbox admitted on the host."""

    measured_mib: float | None
    """What its cgroup holds now; ``None``: not measured (not started, or unreadable)."""
    floor_mib: float
    """Its agent's working set: what it is counted at, at least."""


def counted_mib(held: HeldMemory, growth_mib: float) -> float:
    """What one admitted sandbox is counted at."""
    if held.measured_mib is None:
        return max(held.floor_mib, growth_mib)
    return max(held.measured_mib + growth_mib, held.floor_mib)


def fits(budget: MemoryBudget, held: Iterable[HeldMemory], newcomer: HeldMemory) -> bool:
    """Whether ``newcomer`` fits beside ``held`` within the budget.

    A host that holds nothing admits one whatever it counts at (its own memory limit
    caps it): else a small host would admit nothing, ever, and its attempts wait forever.
    """
    counted = [counted_mib(h, budget.growth_mib) for h in held]
    if not counted:
        return True
    return sum(counted) + counted_mib(newcomer, budget.growth_mib) <= budget.usable_mib
