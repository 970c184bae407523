"""The deployment's sandbox slots on the wire: who holds one, asking for one, giving one back.

One slot per attempt that holds a claim on a host (from ``claim_host`` to the removal of
its sandbox), counted across every worker and host of the deployment by one workflow
(:mod:`workflows.sandbox_slots`), so ``DURABENCH_SANDBOX_QUOTA`` bounds the sandboxes
that exist at once, not only the plan's proposal. No secret: attempts are keys, hosts ids.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FULL",
    "GIVE_BACK",
    "HELD",
    "SLOTS_WORKFLOW",
    "TAKE",
    "GiveBackSlot",
    "SlotAnswer",
    "SlotHolder",
    "SlotsState",
    "TakeSlot",
    "slots_workflow_id",
]

SLOTS_WORKFLOW = "SandboxSlotsWorkflow"
TAKE = "take"
GIVE_BACK = "give_back"
HELD = "held"
FULL = "DeploymentFull"
"""Type of the ``take`` update's rejection: every slot is held."""


def slots_workflow_id(task_queue: str) -> str:
    """The slots workflow's id for the deployment whose shared queue is ``task_queue``."""
    return f"{task_queue}/sandboxes"


class SlotHolder(BaseModel):
    """An attempt holding a slot, on the host that claimed it last."""

    model_config = ConfigDict(frozen=True)

    key: str
    """The attempt: run/task/lane/attempt number."""
    host: str
    """The worker host whose claim holds it: only that host's removal gives it back."""
    workflow_id: str
    """The attempt's workflow: a slot whose holder ended without giving it back is reclaimed."""
    run_id: str = ""


class TakeSlot(BaseModel):
    """``take``: a slot for ``holder`` if fewer than ``limit`` are held."""

    holder: SlotHolder
    limit: int = Field(ge=1)
    """The quota as the asking worker reads it (every worker of a deployment agrees)."""


class SlotAnswer(BaseModel):
    """Whether the slot was granted, and how full the deployment is."""

    granted: bool
    held: int
    limit: int
    already: bool = False
    """The attempt held its slot before this take (a retried claim, or one after a move)."""


class GiveBackSlot(BaseModel):
    """``give_back``: the attempt's sandbox on ``host`` is gone."""

    key: str
    host: str


class SlotsState(BaseModel):
    """The slots workflow's whole state, carried across continue-as-new."""

    holders: dict[str, SlotHolder] = Field(default_factory=dict)
    reap_every_sec: float = Field(default=120.0, gt=0)
    """How often holders are checked for having ended without giving their slot back."""
    max_updates: int = Field(default=1000, ge=1)
    """Updates before the workflow continues as new (the server allows 2,000 a run)."""
    max_history_events: int = Field(default=10_000, ge=100)
