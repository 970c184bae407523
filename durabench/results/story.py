"""A finished run in one sentence: what every report, the viewer and the Web UI open with.

One function, so the first line a person reads says the same wherever they read it: each
lane's mean reward over the pairs compared, the paired difference with its interval, and how
many pairs were compared, left out and not run. A run that measured nothing says so, and how
to rerun it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from durabench.models.results import LaneSummary, RunResult
from durabench.models.scorecard import PairedComparison

__all__ = ["headline", "lanes_sentence", "result_story"]


_INFRA_HINTS = {
    "infra_auth": "the agent could not log in: give the worker the agent's key "
    "(such as ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY)",
    "infra_rate_limit": "the provider kept rate-limiting: lower --parallel or wait",
    "infra_usage_cap": "the account hit its usage cap: wait for the reset or use another",
    "infra_spend_cap": "the run's spend cap was reached: rerun with a higher --max-spend",
    "infra_other": "see each attempt's reason under Excluded attempts",
}


def headline(result: RunResult) -> str | None:
    """One plain sentence when infrastructure, not the agent, decided what was measured."""
    total, excluded = len(result.plan.tasks), len(result.excluded)
    if not excluded:
        return None
    infra = Counter(
        a.exit_class for a in result.attempts if a.infra and a.task_id in result.excluded
    )
    n = sum(infra.values())
    classes = f"{n} infra attempt{'' if n == 1 else 's'}: " + ", ".join(
        f"{k} {cls}" for cls, k in infra.most_common()
    )
    retries = result.plan.request.infra_retries
    tries = (
        "with infra retries off (--infra-retries 0)"
        if retries == 0
        else f"after {retries} retr{'y' if retries == 1 else 'ies'} per arm"
    )
    again = f"python -m starter run --rerun infra --from {result.plan.request.run_id}"
    if excluded < total:
        return (
            f"{excluded} of {total} pairs were excluded: an arm kept failing for "
            f"infrastructure reasons {tries} ({classes}). They are not scored; rerun them "
            f"with `{again}`."
        )
    cause = _INFRA_HINTS.get(infra.most_common(1)[0][0], "") if infra else ""
    return (
        f"Nothing was measured: in every pair an arm kept failing for infrastructure reasons "
        f"{tries} ({classes}), so every pair was excluded and no agent was scored. "
        + (f"Most likely {cause}. " if cause else "")
        + f"Then rerun with `{again}`."
    )


def lanes_sentence(lanes: Iterable[LaneSummary]) -> str:
    """Each lane's mean reward and how many of its scored attempts passed."""
    parts = []
    for lane in lanes:
        mean = "no score" if lane.mean_reward is None else f"mean reward {lane.mean_reward:.3g}"
        parts.append(f"{lane.lane}: {mean} ({lane.passed}/{lane.scored} passed)")
    return "; ".join(parts) or "no lane scored"


def _compared_lanes(c: PairedComparison) -> str:
    """Each lane's mean over the pairs compared: the task means the difference is taken of."""
    n = len(c.tasks)
    base = sum(d.baseline for d in c.tasks) / n
    full = sum(d.full for d in c.tasks) / n
    return (
        f"Over the {n} pair{'' if n == 1 else 's'} compared, {c.baseline_lane}: mean reward "
        f"{base:.3g} ({c.both_pass + c.baseline_only}/{n} passed); {c.full_lane}: mean reward "
        f"{full:.3g} ({c.both_pass + c.full_only}/{n} passed)."
    )


def _left_out(c: PairedComparison, capped: bool) -> str:
    """The pairs not compared: left out (ran, not scored) apart from not run (never started)."""
    left = c.dropped_excluded + c.dropped_unscored
    out = (
        f"; {left} left out ({c.dropped_excluded} excluded for infrastructure, "
        f"{c.dropped_unscored} without a score)"
        if left
        else "; none left out"
    )
    if c.dropped_not_run:
        out += f"; {c.dropped_not_run} not run" + (" (spend cap)" if capped else "")
    return out + "."


def _difference(c: PairedComparison, capped: bool) -> str:
    head = f"Paired difference ({c.full_lane} − {c.baseline_lane}):"
    if c.mean_delta is None or c.ci_low is None or c.ci_high is None:
        return f"{head} none, no pair compared{_left_out(c, capped)}"
    return (
        f"{head} {c.mean_delta:+.3f}, 95% CI [{c.ci_low:+.3f}, {c.ci_high:+.3f}]"
        f"{_left_out(c, capped)}"
    )


def result_story(result: RunResult) -> str:
    """The run's result in plain words, the first thing every view of it says.

    The lanes' means over the pairs compared, then the paired difference with its 95%
    interval, the pairs left out and the pairs not run. The means are taken over the same
    pairs as the difference, task by task, because a reader takes the three numbers as one
    comparison ("0.5 against 0.667, +0.167"): so taken, the MCP mean minus the baseline
    mean is the difference. Means over every scored attempt (the report's lane totals)
    weight a task by its retries and count pairs whose other arm has no score; beside the
    difference they can even point the other way. With no pair compared, the lanes' means
    are over every scored attempt, and the sentence says so.

    A pair that ran and was not scored is left out (excluded for infrastructure, or without
    a score); a pair with no attempt at all was not run, "(spend cap)" when the run had one,
    as the report's "Not run: spend cap" section lists it. A run where every pair was
    excluded says "Nothing was measured" and how to rerun it; a single-lane run (gap-fill)
    has no difference and says how many pairs were excluded and not run.
    """
    total, excluded = len(result.plan.tasks), len(result.excluded)
    if total and excluded >= total:
        return headline(result) or "Nothing was measured."
    capped = result.plan.request.max_spend_usd is not None
    card = result.scorecard
    if card is None or card.comparison is None:
        attempted = {a.task_id for a in result.attempts}
        unrun = sum(1 for t in result.plan.tasks if t.task_id not in attempted)
        dropped = f" {excluded} of {total} pairs excluded." if excluded else ""
        if unrun:
            dropped += f" {unrun} not run" + (" (spend cap)." if capped else ".")
        return lanes_sentence(result.lanes) + "." + dropped
    c = card.comparison
    if not c.tasks:
        lanes = f"Per scored attempt, {lanes_sentence(result.lanes)}."
    else:
        lanes = _compared_lanes(c)
    return f"{lanes} {_difference(c, capped)}"
