"""A pair's messages: the input of ``PairedTaskWorkflow``, its progress, and its end.

A pair runs one task in every lane (baseline and MCP); each lane is an arm that makes
attempts (:mod:`durabench.models.attempt`) until one counts or its retries run out.

How a pair ended reaches its run through the pair's own close, never a message the run
must accept from anyone: the result of a pair that completed, the details of the
:data:`PAIR_ENDED` error a pair fails with when an arm failed, its cancellation, or how
the server says it closed (terminated, timed out). :func:`pair_end` turns each of these
into the one :class:`PairDone` the run counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durabench.models.agent import AgentSpec
from durabench.models.benchmark_service import ServiceTarget
from durabench.models.prices import PriceTable
from durabench.models.results import PairResult
from durabench.models.run import PlanSummary, TaskRef
from durabench.wording import counted

__all__ = [
    "PAIR_ENDED",
    "ArmProgress",
    "AwaitPairsInput",
    "PairDone",
    "PairInput",
    "PairProgress",
    "closed_how",
    "pair_end",
]

PAIR_ENDED = "PairEnded"
"""The ``type`` of the error a pair fails with when an arm failed: its first detail is the
pair's :class:`PairDone` (what the other arm did), so the run counts it without asking."""


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
    spend_capped: bool = False
    """The run has a spend cap: its attempts' requests are reserved against it."""
    """Tokens one attempt may use (the run's ``--budget``); ``None``: no budget."""
    prices: PriceTable = Field(default_factory=PriceTable)
    """The prices the run is costed with (its plan's)."""
    paused: bool = False
    """The run was paused when it started the pair (no retry starts until ``resume``)."""
    control_seq: int = 0
    """The run's count of pauses and resumes then (orders the signals the pair gets)."""

    @classmethod
    def of_plan(
        cls, plan: PlanSummary, task: TaskRef, *, paused: bool, control_seq: int
    ) -> PairInput:
        """The pair of ``task`` in the run ``plan`` describes."""
        req = plan.request
        return cls(
            run_id=req.run_id,
            task=task,
            lanes=plan.lanes,
            agent=req.agent,
            infra_retries=req.infra_retries,
            infra_backoff_sec=req.infra_backoff_sec,
            service=req.service,
            accounts=plan.account_slots is not None,
            lease_poll_sec=req.lease_poll_sec,
            budget_tokens=req.budget_tokens,
            spend_capped=req.max_spend_usd is not None,
            prices=plan.prices,
            paused=paused,
            control_seq=control_seq,
        )


class PairDone(BaseModel):
    """How a pair ended, as its run counts it (see :func:`pair_end`)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    by_class: dict[str, int]
    """Its attempts per exit class."""
    excluded: bool = False
    """Whether the pair is excluded."""
    cancelled: bool = False
    """The pair was cancelled (with its run); its containers are gone."""
    cost_usd: float = 0.0
    """What its attempts cost, metered (an unpriced attempt adds nothing)."""
    unexplained: str = ""
    """How a pair that could not say how it ended closed (terminated, timed out, failed
    without :data:`PAIR_ENDED`): it is excluded, and the run names it."""


class AwaitPairsInput(BaseModel):
    """Input of ``await_pairs``: pairs a run carried over continue-as-new, to wait for."""

    model_config = ConfigDict(frozen=True)

    pairs: tuple[tuple[str, str], ...]
    """``(workflow id, task id)`` of each pair."""
    wait_sec: float
    """How long to wait for the first of them to close before answering none."""


def closed_how(cause: BaseException) -> str:
    """How a pair that failed without saying why closed, in a few words.

    Temporal's errors say it by their class: ``TerminatedError`` (an operator ended it),
    ``TimeoutError`` (its run timeout passed); anything else is named with its message.
    """
    words = {"TerminatedError": "terminated", "TimeoutError": "timed out"}
    name = type(cause).__name__
    message = getattr(cause, "message", None) or str(cause)
    return words.get(name) or f"{name}: {message}"


def pair_end(
    task_id: str,
    *,
    result: PairResult | None = None,
    error_type: str | None = None,
    details: Sequence[object] = (),
    cancelled: bool = False,
    how: str = "",
) -> PairDone:
    """How a pair ended, from how it closed.

    ``result``: it completed. ``error_type`` and ``details``: the error it failed with.
    ``cancelled``: it closed cancelled. Otherwise ``how`` says how it closed, and it is
    counted excluded and named.
    """
    if result is not None:
        by_class = Counter(a.exit_class for a in result.attempts)
        cost = sum(a.cost_usd or 0.0 for a in result.attempts)
        return PairDone(
            task_id=task_id, by_class=dict(by_class), excluded=result.excluded, cost_usd=cost
        )
    if cancelled:
        return PairDone(task_id=task_id, by_class={}, cancelled=True)
    if error_type == PAIR_ENDED and details:
        try:
            done = PairDone.model_validate(details[0])
            return done.model_copy(update={"task_id": task_id})
        except ValidationError as err:
            how = f"{how} (its PairDone did not parse: {counted(err.error_count(), 'error')})"
    return PairDone(task_id=task_id, by_class={}, excluded=True, unexplained=how or "unknown")


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
