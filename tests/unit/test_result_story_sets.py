"""The result's sentence counts every pair once and shows its means over the pairs it compares.

Two hand-worked runs, then the family: any results set, built as ``load_results`` builds one,
opens with counts that add up to the run's tasks and lane means that cannot contradict the
paired difference printed beside them.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from durabench.models.results import RunResult
from durabench.models.run import TaskRef
from durabench.results.files import excluded_pairs
from durabench.results.report import render_markdown, summarize_lanes
from durabench.results.scoring import compute_scorecard
from durabench.results.story import result_story
from tests.unit.results_set import LANES, attempt, hand_result

BASE, FULL = LANES

Arm = list[tuple[str, float | None]]
"""An arm's attempts in order: exit class and reward."""


def run_of(arms: dict[str, tuple[Arm, Arm]], cap: float | None = None) -> RunResult:
    """The hand run's plan over ``arms``' tasks, scored as ``load_results`` scores a run."""
    hand = hand_result()
    attempts = tuple(
        attempt(task, lane, n, exit_class, reward)
        for task, pair in arms.items()
        for lane, arm in zip(LANES, pair, strict=True)
        for n, (exit_class, reward) in enumerate(arm, start=1)
    )
    excluded = excluded_pairs(attempts)
    request = hand.plan.request.model_copy(update={"max_spend_usd": cap})
    tasks = tuple(TaskRef(task_id=t, task_dir=f"/{t}") for t in arms)
    plan = hand.plan.model_copy(
        update={"request": request, "tasks": tasks, "task_count": len(tasks)}
    )
    return hand.model_copy(
        update={
            "plan": plan,
            "attempts": attempts,
            "excluded": excluded,
            "lanes": summarize_lanes(attempts, LANES, excluded),
            "scorecard": compute_scorecard(attempts, list(arms), LANES, excluded),
        }
    )


def _hand_arms() -> dict[str, tuple[Arm, Arm]]:
    arms: dict[str, tuple[Arm, Arm]] = {}
    for a in hand_result().attempts:
        base, full = arms.setdefault(a.task_id, ([], []))
        (base if a.lane == BASE else full).append((a.exit_class, a.reward))
    return arms


def test_pairs_the_spend_cap_never_started_are_not_run_not_left_out() -> None:
    """The hand run with 12 more tasks the cap left unstarted (t6-t17): no attempt at all.

    Compared, excluded and unscored are the hand run's 3, 1 and 1; the 12 are said not run
    by the spend cap, as the report's "Not run: spend cap" section lists them.
    """
    arms = {**_hand_arms(), **{f"t{i}": ([], []) for i in range(6, 18)}}
    assert result_story(run_of(arms, cap=7.5)) == (
        "Over the 3 pairs compared, baseline: mean reward 0.5 (1/3 passed); sourcegraph_full: "
        "mean reward 0.667 (2/3 passed). Paired difference (sourcegraph_full − baseline): "
        "+0.167, 95% CI [-0.500, +1.000]; 2 left out (1 excluded for infrastructure, 1 "
        "without a score); 12 not run (spend cap)."
    )
    uncapped = result_story(run_of(arms))  # a run that ended early: not run, cause unknown
    assert uncapped.endswith("without a score); 12 not run."), uncapped
    capped = run_of(arms, cap=7.5)
    card = capped.scorecard
    assert card is not None
    report = render_markdown(capped, card)
    assert (
        "- pairs compared: 3; dropped: 1 with an excluded arm, 1 with an arm that has no scored "
        "attempt; not run (no attempt in either arm): 12"
    ) in report
    assert report.count(": not run: spend cap") == 12  # the section the sentence points to
    single = capped.model_copy(update={"scorecard": card.model_copy(update={"comparison": None})})
    assert result_story(single).endswith(
        "(2/3 passed). 1 of 17 pairs excluded. 12 not run (spend cap)."
    ), result_story(single)


def test_the_lane_means_beside_the_difference_are_over_the_same_pairs() -> None:
    """Per scored attempt the MCP lane is below baseline; over the pair compared it is above.

    t1: baseline 0.0, full 0.5 (compared, +0.5). t2, t3: baseline 1.0, full gave no reward.
    Every scored attempt: baseline (0 + 1 + 1) / 3 = 0.667, full 0.5, a gap of -0.167 beside
    a paired difference of +0.5. Over t1 alone: baseline 0, full 0.5, the +0.5 it prints.
    """
    no_reward: Arm = [("completed", None)]
    result = run_of(
        {
            "t1": ([("completed", 0.0)], [("completed", 0.5)]),
            "t2": ([("completed", 1.0)], no_reward),
            "t3": ([("completed", 1.0)], no_reward),
        }
    )
    assert [lane.mean_reward for lane in result.lanes] == [2 / 3, 0.5]
    assert result_story(result) == (
        "Over the 1 pair compared, baseline: mean reward 0 (0/1 passed); sourcegraph_full: "
        "mean reward 0.5 (0/1 passed). Paired difference (sourcegraph_full − baseline): "
        "+0.500, 95% CI [+0.500, +0.500]; 2 left out (0 excluded for infrastructure, 2 "
        "without a score)."
    )


def test_with_no_pair_compared_the_lane_means_say_what_they_are_over() -> None:
    """t1: both lanes scored nothing; t2: full never ran. Baseline's one 1.0 is per attempt."""
    result = run_of(
        {
            "t1": ([("completed", None)], [("completed", None)]),
            "t2": ([("completed", 1.0)], []),
        }
    )
    assert result_story(result) == (
        "Per scored attempt, baseline: mean reward 1 (1/1 passed); sourcegraph_full: no score "
        "(0/0 passed). Paired difference (sourcegraph_full − baseline): none, no pair "
        "compared; 2 left out (0 excluded for infrastructure, 2 without a score)."
    )


_TRIES = st.sampled_from(
    [
        ("completed", 1.0),
        ("completed", 0.5),
        ("completed", 0.0),
        ("model_timeout", 0.25),
        ("completed", None),  # the verifier gave no reward
        ("infra_rate_limit", None),  # last: the pair is excluded
    ]
)
_ARM = st.lists(_TRIES, max_size=3)


def _count(pattern: str, story: str) -> int:
    found = re.search(pattern, story)
    return int(found.group(1)) if found else 0


def _mean(lane: str, story: str) -> float | None:
    found = re.search(rf"{lane}: mean reward (\S+) \(", story)
    return float(found.group(1)) if found else None


@settings(max_examples=300, deadline=None)
@given(
    arms=st.lists(st.tuples(_ARM, _ARM), min_size=1, max_size=8),
    cap=st.sampled_from([None, 5.0]),
)
def test_the_sentence_counts_every_task_once_and_its_means_agree_with_the_difference(
    arms: list[tuple[Arm, Arm]], cap: float | None
) -> None:
    result = run_of({f"t{i}": pair for i, pair in enumerate(arms)}, cap)
    story, total = result_story(result), len(arms)
    if story.startswith("Nothing was measured"):
        assert len(result.excluded) == total
        return
    compared = _count(r"[Oo]ver the (\d+) pairs? compared", story)
    excluded = _count(r"(\d+) excluded for infrastructure", story)
    unscored = _count(r"(\d+) without a score", story)
    not_run = _count(r"(\d+) not run", story)
    assert compared + excluded + unscored + not_run == total, story
    assert not_run == sum(1 for base, full in arms if not base and not full), story
    assert ("not run (spend cap)" in story) == (cap is not None and not_run > 0), story
    difference = re.search(r"\): ([+-]\d+\.\d+), 95% CI", story)
    if not compared:
        assert difference is None and story.startswith("Per scored attempt, "), story
        return
    base, full = _mean(BASE, story), _mean(FULL, story)
    assert difference is not None and base is not None and full is not None, story
    assert (full - base) * float(difference.group(1)) >= 0, story  # never opposite signs
