"""A finished run in one sentence: what every report, the viewer and the Web UI open with.

One function, so the first line a person reads says the same wherever they read it: each
lane's mean reward, the paired difference with its interval, and how many pairs were
compared and left out. A run that measured nothing says so, and how to rerun it.
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


def _difference(c: PairedComparison) -> str:
    n = len(c.tasks)
    pairs = f"{n} pair{'' if n == 1 else 's'} compared"
    left = c.dropped_excluded + c.dropped_unscored
    out = (
        f"; {left} left out ({c.dropped_excluded} excluded for infrastructure, "
        f"{c.dropped_unscored} without a score)"
        if left
        else "; none left out"
    )
    if c.mean_delta is None or c.ci_low is None or c.ci_high is None:
        return f"Paired difference ({c.full_lane} − {c.baseline_lane}): none, {pairs}{out}."
    return (
        f"Paired difference ({c.full_lane} − {c.baseline_lane}): {c.mean_delta:+.3f}, "
        f"95% CI [{c.ci_low:+.3f}, {c.ci_high:+.3f}], over {pairs}{out}."
    )


def result_story(result: RunResult) -> str:
    """The run's result in plain words, the first thing every view of it says.

    Lanes' means first, then the paired difference with its 95% interval and the pairs
    compared and left out. A run where every pair was excluded says "Nothing was measured"
    and how to rerun it; a single-lane run (gap-fill) has no difference and says how many
    pairs were excluded.
    """
    total, excluded = len(result.plan.tasks), len(result.excluded)
    if total and excluded >= total:
        return headline(result) or "Nothing was measured."
    lanes = lanes_sentence(result.lanes) + "."
    card = result.scorecard
    if card is None or card.comparison is None:
        dropped = f" {excluded} of {total} pairs excluded." if excluded else ""
        return lanes + dropped
    return f"{lanes} {_difference(card.comparison)}"
