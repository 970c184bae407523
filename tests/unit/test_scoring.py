"""Scoring against a results set where every counter has its own value.

When two counters hold the same number, a bug that swaps them publishes the right figures;
here each pair class, dropped-pair kind and lane total differs, so a swap shows.

| tasks    | baseline                                | full                         | counts as  |
|----------|-----------------------------------------|------------------------------|------------|
| pass1-4  | completed 1.0                           | completed 1.0                | both pass  |
| fail1-5  | 0.0 (fail1: †timeout, †agent_error)     | completed 0.5                | both fail  |
| bonly1   | completed 1.0                           | completed 0.0                | base only  |
| fonly1-6 | completed 0.0                           | completed 1.0                | full only  |
| ex1      | completed 1.0, agent_error 0.25         | infra_usage_cap ×2           | excluded   |
| ex2      | infra_rate_limit ×2                     | completed 1.0                | excluded   |
| un1      | completed 1.0                           | infra, completed no reward   | unscored   |
| un2      | completed no reward, infra_usage_cap    | completed 1.0                | unscored   |
| un3      | completed 0.0                           | not run                      | unscored   |

Compared: 16 pairs, deltas 0 ×4, +0.5 ×5, -1, +1 ×6: mean 7.5 / 16. McNemar b=1, c=6:
p = 2 * (1 + 7) / 2**7 = 0.125. Dropped: 2 excluded, 3 unscored.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.models.results import AttemptResult
from durabench.models.verdict import TokenUsage
from durabench.results.scoring import compute_scorecard
from durabench.results.stats import paired_bootstrap_ci
from tests.unit.results_set import attempt

LANES = ("baseline", "sourcegraph_full")
BASE, FULL = LANES
TOKENS = TokenUsage(input=1000, output=100, cache_read=10)


def a(
    task: str, lane: str, n: int, exit_class: str, reward: float | None, **kw: Any
) -> AttemptResult:
    return attempt(task, lane, n, exit_class, reward, **({"tokens": TOKENS} | kw))


def pair(task: str, base: float, full: float) -> list[AttemptResult]:
    return [a(task, BASE, 1, "completed", base), a(task, FULL, 1, "completed", full)]


PASS = [f"pass{i}" for i in range(1, 5)]
FAIL = [f"fail{i}" for i in range(1, 6)]
FONLY = [f"fonly{i}" for i in range(1, 7)]
TASKS = (*PASS, *FAIL, "bonly1", *FONLY, "ex1", "ex2", "un1", "un2", "un3")
EXCLUDED = {"ex1": "full ended infra_usage_cap", "ex2": "baseline ended infra_rate_limit"}
NO_REWARD = "RewardFileMissing: no reward.txt"

ATTEMPTS = (
    *[x for t in PASS for x in pair(t, 1.0, 1.0)],
    # fail1's baseline attempts arrive last first: the footnotes still read in attempt order.
    a("fail1", BASE, 2, "model_agent_error", 0.0, wall_seconds=42.4),
    a("fail1", BASE, 1, "model_timeout", 0.0, wall_seconds=599.6),
    a("fail1", FULL, 1, "completed", 0.5),
    *[x for t in FAIL[1:] for x in pair(t, 0.0, 0.5)],
    *pair("bonly1", 1.0, 0.0),
    *[x for t in FONLY for x in pair(t, 0.0, 1.0)],
    a("ex1", BASE, 1, "completed", 1.0),
    a("ex1", BASE, 2, "model_agent_error", 0.25, wall_seconds=42.0),
    a("ex1", FULL, 1, "infra_usage_cap", None, cost_usd=None, reason="cap on 1"),
    a("ex1", FULL, 2, "infra_usage_cap", None, cost_usd=None, reason="cap on 2"),
    a("ex2", BASE, 1, "infra_rate_limit", None, cost_usd=None, reason="429 on 1"),
    a("ex2", BASE, 2, "infra_rate_limit", None, cost_usd=None, reason="429 on 2"),
    a("ex2", FULL, 1, "completed", 1.0),
    a("un1", BASE, 1, "completed", 1.0),
    a("un1", FULL, 1, "infra_rate_limit", None, cost_usd=None, reason="429 then"),
    a("un1", FULL, 2, "completed", None, reason="tests did not start"),
    a("un2", BASE, 1, "completed", None, verifier_error=NO_REWARD),
    a("un2", BASE, 2, "infra_usage_cap", None, reason="cap at last"),
    a("un2", FULL, 1, "completed", 1.0),
    a("un3", BASE, 1, "completed", 0.0),
)


def card() -> Any:
    return compute_scorecard(ATTEMPTS, TASKS, LANES, EXCLUDED)


def test_every_pair_counter_has_its_own_value() -> None:
    c = card().comparison
    assert (c.baseline_lane, c.full_lane) == LANES
    assert (c.both_pass, c.both_fail, c.baseline_only, c.full_only) == (4, 5, 1, 6)
    assert (c.dropped_excluded, c.dropped_unscored) == (2, 3)
    assert c.mcnemar_p == pytest.approx(0.125, abs=1e-15)
    deltas = [0.0] * 4 + [0.5] * 5 + [-1.0] + [1.0] * 6
    assert [d.delta for d in c.tasks] == deltas
    assert [d.task_id for d in c.tasks] == list(TASKS[:16])
    assert (c.tasks[0].baseline, c.tasks[0].full) == (1.0, 1.0)
    assert (c.tasks[9].baseline, c.tasks[9].full) == (1.0, 0.0)  # bonly1: not swapped
    assert c.mean_delta == pytest.approx(7.5 / 16)
    assert (c.ci_low, c.ci_high) == paired_bootstrap_ci(deltas)
    assert c.ci_low < c.ci_high


def test_a_pair_with_no_attempt_in_either_lane_is_not_run_not_unscored() -> None:
    """Four tasks nothing ran (a spend cap left them) are their own count, not "unscored".

    un3 (baseline ran, full did not) stays unscored: half a pair ran, so it was started.
    """
    tasks = (*TASKS, "nr1", "nr2", "nr3", "nr4")
    c = compute_scorecard(ATTEMPTS, tasks, LANES, EXCLUDED).comparison
    assert c is not None
    assert (len(c.tasks), c.dropped_excluded, c.dropped_unscored, c.dropped_not_run) == (
        16,
        2,
        3,
        4,
    )
    assert card().comparison.dropped_not_run == 0


def test_the_pass_threshold_decides_the_pair_classes() -> None:
    c = compute_scorecard(ATTEMPTS, TASKS, LANES, EXCLUDED, threshold=0.5).comparison
    assert c.pass_threshold == 0.5
    # fail1-5 (0.0 -> 0.5) now pass on the full lane only.
    assert (c.both_pass, c.both_fail, c.baseline_only, c.full_only) == (4, 0, 1, 11)


def test_a_missing_cell_is_explained_by_its_last_attempt() -> None:
    cells = {(c.task_id, c.lane): c for c in card().cells}
    assert [(c.task_id, c.lane) for c in card().cells][:2] == [("pass1", BASE), ("pass1", FULL)]
    why = {key: cells[key].missing_reason for key in cells if cells[key].mean is None}
    assert why == {
        ("ex1", FULL): "2 attempt(s), last infra_usage_cap",
        ("ex2", BASE): "2 attempt(s), last infra_rate_limit",
        # The last attempt ran and gave no reward, after an infra one: not an infra cell.
        ("un1", FULL): "no reward: tests did not start",
        # An infra attempt last, after one that gave no reward: an infra cell.
        ("un2", BASE): "2 attempt(s), last infra_usage_cap",
        ("un3", FULL): "not run",
    }
    assert cells[("un1", FULL)].included == 0
    assert cells[("un1", FULL)].best is None


def test_a_cell_s_best_mean_and_footnotes() -> None:
    cells = {(c.task_id, c.lane): c for c in card().cells}
    ex1 = cells[("ex1", BASE)]
    assert (ex1.best, ex1.mean, ex1.included, ex1.missing_reason) == (1.0, 0.625, 2, "")
    assert ex1.daggers == ("attempt 2: model_agent_error after 42 s",)
    fail1 = cells[("fail1", BASE)]
    assert fail1.daggers == (
        "attempt 1: model_timeout after 600 s",
        "attempt 2: model_agent_error after 42 s",
    )
    assert cells[("un2", BASE)].included == 0
    assert cells[("ex2", FULL)].daggers == ()


def test_each_excluded_attempt_and_its_reason() -> None:
    assert [
        (e.task_id, e.lane, e.attempt, e.exit_class, e.reason) for e in card().excluded_attempts
    ] == [
        ("ex1", FULL, 1, "infra_usage_cap", "cap on 1"),
        ("ex1", FULL, 2, "infra_usage_cap", "cap on 2"),
        ("ex2", BASE, 1, "infra_rate_limit", "429 on 1"),
        ("ex2", BASE, 2, "infra_rate_limit", "429 on 2"),
        ("un1", FULL, 1, "infra_rate_limit", "429 then"),
        ("un1", FULL, 2, "completed", "no reward: tests did not start"),
        ("un2", BASE, 1, "completed", f"no reward: {NO_REWARD}"),
        ("un2", BASE, 2, "infra_usage_cap", "cap at last"),
    ]


def test_totals_per_lane_and_overall() -> None:
    base, full, everything = card().totals
    rows = [
        (t.lane, t.attempts, t.input_tokens, t.output_tokens, t.cache_read_tokens)
        for t in (base, full, everything)
    ]
    assert rows == [
        (BASE, 25, 25_000, 2_500, 250),
        (FULL, 22, 22_000, 2_200, 220),
        ("all", 47, 47_000, 4_700, 470),
    ]
    costs = [(t.cost_usd, t.cost_unreported) for t in (base, full, everything)]
    assert costs == [(11.5, 2), (9.5, 3), (21.0, 5)]


def test_one_lane_has_no_comparison() -> None:
    one = compute_scorecard([x for x in ATTEMPTS if x.lane == BASE], TASKS, (BASE,), {})
    assert one.comparison is None
    assert [t.lane for t in one.totals] == [BASE, "all"]
    assert len(one.cells) == len(TASKS)


def test_no_pair_to_compare_gives_no_interval() -> None:
    c = compute_scorecard(ATTEMPTS, ("ex1", "un3"), LANES, EXCLUDED).comparison
    assert (c.tasks, c.mean_delta, c.ci_low, c.ci_high) == ((), None, None, None)
    assert (c.both_pass, c.both_fail, c.baseline_only, c.full_only) == (0, 0, 0, 0)
    assert (c.mcnemar_p, c.dropped_excluded, c.dropped_unscored) == (1.0, 1, 1)
    assert (c.resamples, c.seed) == (10_000, 20_251_125)


def test_an_infra_retry_is_not_in_the_cell_s_mean() -> None:
    """Baseline 0.0; full: infra_rate_limit (no reward), then completed 1.0.

    The full cell counts one attempt: Best 1.0, Mean 1.0 / 1 = 1.0 (divided by both
    attempts it would show 0.5). The pair: delta 1.0 - 0.0 = +1.0, full passes alone:
    b=0, c=1, McNemar p = min(1, 2 * 1/2) = 1.0.
    """
    attempts = (
        a("r1", BASE, 1, "completed", 0.0),
        a("r1", FULL, 1, "infra_rate_limit", None, reason="429"),
        a("r1", FULL, 2, "completed", 1.0),
    )
    got = compute_scorecard(attempts, ("r1",), LANES, {})
    full = got.cells[1]
    assert (full.lane, full.best, full.mean, full.included, full.daggers) == (
        FULL,
        1.0,
        1.0,
        1,
        (),
    )
    c = got.comparison
    assert c is not None
    assert [(d.baseline, d.full, d.delta) for d in c.tasks] == [(0.0, 1.0, 1.0)]
    assert (c.mean_delta, c.baseline_only, c.full_only, c.mcnemar_p) == (1.0, 0, 1, 1.0)


def test_an_attempt_that_cost_nothing_reported_its_cost() -> None:
    """$0.00 is a reported cost (a free tier, a cached answer); only ``None`` is unreported.

    Baseline: $0.00 and $0.50 reported: $0.50, 0 unreported. Full: $0.00 and no cost: $0.00,
    1 unreported. All: $0.50, 1 unreported.
    """
    attempts = (
        a("z1", BASE, 1, "completed", 1.0, cost_usd=0.0),
        a("z1", BASE, 2, "completed", 1.0, cost_usd=0.5),
        a("z1", FULL, 1, "completed", 1.0, cost_usd=0.0),
        a("z1", FULL, 2, "completed", 1.0, cost_usd=None),
    )
    totals = compute_scorecard(attempts, ("z1",), LANES, {}).totals
    assert [(t.lane, t.cost_usd, t.cost_unreported) for t in totals] == [
        (BASE, 0.5, 0),
        (FULL, 0.0, 1),
        ("all", 0.5, 1),
    ]
