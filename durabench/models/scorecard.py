"""The numbers a run publishes: per-cell Best/Mean, exclusions, the paired comparison, totals."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Cell",
    "CostComparison",
    "ExcludedAttempt",
    "PairedComparison",
    "Scorecard",
    "TaskCost",
    "TaskDelta",
    "Totals",
]


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
    dropped_not_run: int = 0
    """Pairs never started: neither arm has an attempt (a spend cap left them unrun)."""


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
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache."""
    cost_usd: float
    """Cost of the attempts that have one (metered tokens at the run's prices)."""
    cost_unreported: int
    """Attempts of an agent that calls a model, with no cost and no unpriced model: no
    gateway metered them and their agent printed none."""
    cost_unpriced: int = 0
    """Attempts that used a model the run's prices do not cover: not in ``cost_usd``."""
    no_model: int = 0
    """Attempts of an agent that calls no model (the oracle, nop): there is nothing to cost."""


class TaskCost(BaseModel):
    """What one task cost in each lane, per attempt that counts, and the difference."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    baseline_usd: float | None
    """Mean cost of the baseline's attempts that count; ``None``: one is unpriced."""
    full_usd: float | None
    """The same in the MCP lane."""
    delta_usd: float | None
    """``full_usd - baseline_usd``; ``None`` when either is unpriced."""
    baseline_tokens: float
    """Mean tokens (every kind) of the baseline's attempts that count."""
    full_tokens: float
    """The same in the MCP lane."""
    delta_tokens: float
    """``full_tokens - baseline_tokens``."""


class CostComparison(BaseModel):
    """What the MCP lane costs against the baseline, over the pairs the reward compares.

    The same pairs, attempts and bootstrap as :class:`PairedComparison`: a cost and a
    reward difference are read side by side. Infra attempts cost too; they are in the
    lane totals, not here (they measure the infrastructure, not the lane).
    """

    model_config = ConfigDict(frozen=True)

    baseline_lane: str
    full_lane: str
    tasks: tuple[TaskCost, ...]
    """Per task, over the pairs the reward compares."""
    priced_pairs: int
    """Pairs whose both arms are priced: the cost difference is over these."""
    unpriced_pairs: int
    """Pairs left out of the cost difference because an arm is unpriced."""
    mean_baseline_usd: float | None
    """Mean baseline cost per task, over the priced pairs."""
    mean_full_usd: float | None
    """Mean MCP-lane cost per task, over the priced pairs."""
    mean_delta_usd: float | None
    """Mean per-task cost difference (MCP − baseline); ``None``: no priced pair."""
    ci_low_usd: float | None
    """Lower bound of its paired bootstrap 95% CI."""
    ci_high_usd: float | None
    """Upper bound."""
    mean_delta_tokens: float | None
    """Mean per-task token difference over every compared pair; ``None``: none."""
    ci_low_tokens: float | None
    """Lower bound of its paired bootstrap 95% CI."""
    ci_high_tokens: float | None
    """Upper bound."""
    resamples: int
    """Bootstrap resamples (the reward's)."""
    seed: int
    """Bootstrap seed (the reward's)."""


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
    cost: CostComparison | None = None
    """The cost and token difference between the lanes; ``None`` for single-lane runs."""
