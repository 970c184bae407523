"""The numbers a run publishes: per-cell Best/Mean, exclusions, the paired comparison, totals."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Cell", "ExcludedAttempt", "PairedComparison", "Scorecard", "TaskDelta", "Totals"]


class Cell(BaseModel):
    """One task in one lane, over its included attempts."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    lane: str
    best: float | None
    """Best reward over included attempts."""
    mean: float | None
    """Mean reward over included attempts."""
    included: int
    """Attempts that count: ``completed`` or ``model_*`` whose tests ran."""
    daggers: tuple[str, ...] = ()
    """Footnotes (†) for included attempts that did not complete: class and wall time."""
    missing_reason: str = ""
    """Why no attempt counts, when none does."""


class ExcludedAttempt(BaseModel):
    """An attempt that is not a model data point, and why."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    lane: str
    attempt: int
    exit_class: str
    """Its class (``infra_*``), or the class of an attempt whose verifier gave no reward."""
    reason: str
    """Why."""


class TaskDelta(BaseModel):
    """MCP minus baseline for one task."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    baseline: float
    """Mean baseline reward."""
    full: float
    """Mean MCP-lane reward."""
    delta: float
    """``full - baseline``."""


class PairedComparison(BaseModel):
    """The MCP lane against the baseline, task by task."""

    model_config = ConfigDict(frozen=True)

    baseline_lane: str
    full_lane: str
    """The MCP lane."""
    pass_threshold: float
    """A lane passes a task when its mean reward is at least this."""
    tasks: tuple[TaskDelta, ...]
    """Per-task differences over the pairs that count."""
    mean_delta: float | None
    """Mean of the per-task differences."""
    ci_low: float | None
    """Lower bound of the paired bootstrap 95% CI of ``mean_delta``."""
    ci_high: float | None
    """Upper bound."""
    resamples: int
    """Bootstrap resamples."""
    seed: int
    """Bootstrap seed."""
    both_pass: int
    """Pairs both lanes pass."""
    both_fail: int
    """Pairs both lanes fail."""
    baseline_only: int
    """Discordant: only the baseline passes."""
    full_only: int
    """Discordant: only the MCP lane passes."""
    mcnemar_p: float
    """Two-sided exact McNemar p on the discordant pairs."""
    dropped_excluded: int
    """Pairs dropped because an arm was excluded (exhausted its infra retries)."""
    dropped_unscored: int
    """Pairs dropped because an arm has no included attempt (e.g. no reward)."""


class Totals(BaseModel):
    """Tokens and cost of a lane, or of the whole run (lane ``all``); every attempt counts."""

    model_config = ConfigDict(frozen=True)

    lane: str
    """Lane, or ``all``."""
    attempts: int
    """Attempts, infra included: they cost too."""
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    """Cached input tokens."""
    cost_usd: float
    """Reported cost."""
    cost_unreported: int
    """Attempts whose agent calls a model and reported no cost."""
    no_model: int = 0
    """Attempts of an agent that calls no model (the oracle, nop): there is nothing to cost."""


class Scorecard(BaseModel):
    """Everything the report shows, computed from the attempts alone."""

    model_config = ConfigDict(frozen=True)

    cells: tuple[Cell, ...]
    """Per task and lane."""
    excluded_attempts: tuple[ExcludedAttempt, ...]
    """Every attempt that does not count, and why."""
    comparison: PairedComparison | None
    """The paired comparison; ``None`` for single-lane runs."""
    totals: tuple[Totals, ...]
    """Per lane, then ``all``."""
