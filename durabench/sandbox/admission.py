"""How many sandboxes a backend admits at once, in all: one of the bounds of ``--parallel``.

Each backend answers in its own terms: Docker by its worker hosts, each admitting
``DURABENCH_MAX_SANDBOXES`` (:class:`~durabench.sandbox.docker.capacity.HostCapacity`
enforces it per host); a remote service by its quota. A backend registers its answer
with :func:`sandbox_admission` beside its
:func:`~durabench.sandbox.backend_registry.sandbox_backend`;
one that registers none is bounded by ``DURABENCH_SANDBOX_QUOTA`` alone, which also
overrides any backend's own count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from durabench.settings.values import Settings

__all__ = ["Admission", "AdmissionFacts", "admitted_sandboxes", "sandbox_admission"]


class AdmissionFacts(NamedTuple):
    """What the planning worker knows when it asks."""

    settings: Settings
    """The planning worker's settings (its own host's limit, the quota)."""
    hosts: Sequence[str]
    """Worker hosts seen polling for work, this one included."""


class Admission(NamedTuple):
    """The backend's answer."""

    sandboxes: int | None
    """Sandboxes it admits at once, in all; ``None``: it names no limit."""
    detail: str
    """Where the number comes from, for the plan."""


AdmissionRule = Callable[[AdmissionFacts], Admission]

_RULES: dict[str, AdmissionRule] = {}


def sandbox_admission(name: str) -> Callable[[AdmissionRule], AdmissionRule]:
    """Decorator: register how backend ``name`` counts the sandboxes it admits."""

    def register(rule: AdmissionRule) -> AdmissionRule:
        _RULES[name] = rule
        return rule

    return register


def admitted_sandboxes(backend: str, facts: AdmissionFacts) -> Admission:
    """The sandboxes ``backend`` admits at once: the quota if set, else its own count."""
    quota = facts.settings.sandbox_quota
    if quota is not None:
        return Admission(quota, f"DURABENCH_SANDBOX_QUOTA {quota} ({backend})")
    rule = _RULES.get(backend)
    if rule is None:
        return Admission(None, f"{backend} names no limit; set DURABENCH_SANDBOX_QUOTA")
    return rule(facts)
