"""A pair's messages: the input of ``PairedTaskWorkflow``, its progress, and its end.

A pair runs one task in every lane (baseline and MCP); each lane is an arm that makes
attempts (:mod:`durabench.models.attempt`) until one counts or its retries run out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from durabench.models.agent import AgentSpec
from durabench.models.benchmark_service import ServiceTarget
from durabench.models.run import TaskRef

__all__ = ["ArmProgress", "PairDone", "PairInput", "PairProgress"]


class PairInput(BaseModel):
    """Input of ``PairedTaskWorkflow``."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    task: TaskRef
    """The task both lanes run."""
    lanes: tuple[str, ...]
    """Lane config names."""
    agent: AgentSpec
    """The agent, its model and options, as the run's request named them."""
    infra_retries: int = 2
    """New attempts an arm gets after an infra attempt."""
    infra_backoff_sec: float = 60.0
    """Wait before the first infra retry; doubles after."""
    service: ServiceTarget | None = None
    """The service that grades the attempts instead of the local verifier."""
    accounts: bool = False
    """Whether each attempt leases a slot of an agent account from the pool first."""
    lease_poll_sec: float = 15.0
    """While every slot of the agent's accounts is in use, how often an arm asks again."""
    budget_tokens: int | None = None
    """Tokens one attempt may use (the run's ``--budget``); ``None``: no budget."""
    paused: bool = False
    """The run was paused when it started the pair (no retry starts until ``resume``)."""
    control_seq: int = 0
    """The run's count of pauses and resumes then (orders the signals the pair gets)."""


class PairDone(BaseModel):
    """Signalled by a pair to its run when it ends (pairs outlive continue-as-new)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    by_class: dict[str, int]
    """Its attempts per exit class."""
    excluded: bool = False
    """Whether the pair is excluded."""
    cancelled: bool = False
    """The pair was cancelled (with its run); its containers are gone."""


class ArmProgress(BaseModel):
    """Where one arm of a pair is."""

    model_config = ConfigDict(frozen=True)

    lane: str
    attempt: int
    """The attempt running or next."""
    state: Literal["running", "backoff", "paused", "waiting_account", "done"]
    """Running an attempt, waiting to retry after an infra failure, waiting for an account
    slot, or finished."""
    retry_at: datetime | None = None
    """When the next attempt starts, during a backoff; when an account is back from its
    cooldown, while waiting for one."""
    note: str = ""
    """Why the arm waits for an account."""
    last_class: str | None = None
    """Exit class of the previous attempt."""


class PairProgress(BaseModel):
    """Answer of the pair workflow's ``progress`` query."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    arms: tuple[ArmProgress, ...]
    """Each lane."""
