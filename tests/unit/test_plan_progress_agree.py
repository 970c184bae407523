"""The plan's rows and the progress a run prints never contradict each other.

Enumerated over plans (tasks, lanes, parallel slots, what the host admits) and over runs
(pairs finishing one or several between two looks, retries, the end coming between
looks): the containers at once are never more than the containers, the pairs at once never
more than the tasks, each "k/N pairs" line counts up by one, the attempts a line names are
those of the pairs it says are done, and the run's end is said after its last pair.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from durabench.models.parallelism import ParallelBound, Parallelism
from durabench.models.run import PlanSummary, RunRequest
from durabench.models.suite_run import ProgressOutput
from durabench.planning.rows import plan_rows
from starter.progress_lines import ProgressLines

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
LANES = ("baseline", "sourcegraph_full")


@st.composite
def plans(draw: st.DrawFn) -> PlanSummary:
    tasks = draw(st.integers(1, 30))
    lanes = LANES[: draw(st.integers(1, 2))]
    parallel = draw(st.integers(1, 40))
    host = draw(st.none() | st.integers(1, 60))
    overridden = draw(st.booleans())
    bound = ParallelBound(source="sandboxes", pairs=parallel, detail="d")
    parallelism = Parallelism(
        parallel=parallel,
        bounds=(bound,),
        overridden=overridden,
        bound_by=None if overridden else "sandboxes",
        derived=parallel,
    )
    return PlanSummary(
        request=RunRequest(run_id="r", suite="s", parallel=parallel if overridden else None),
        lanes=lanes,
        task_count=tasks,
        estimated_agent_hours=0.5,
        results_dir="/r",
        host_id="h",
        host_sandboxes=host,
        parallelism=parallelism,
    )


def _first_int(text: str) -> int:
    return int(re.search(r"\d+", text).group())  # type: ignore[union-attr]


@given(plans())
def test_the_containers_at_once_are_never_more_than_the_containers(plan: PlanSummary) -> None:
    rows = {r.key: r.value for r in plan_rows(plan)}
    containers, at_once = rows["containers"].split(", ", 1)
    assert int(containers) == plan.task_count * len(plan.lanes)
    most = _first_int(at_once.removeprefix("at most "))
    assert 1 <= most <= int(containers), rows["containers"]


@given(plans())
def test_the_pairs_at_once_are_never_more_than_the_tasks(plan: PlanSummary) -> None:
    """Slots beyond the tasks are said to stay empty, not shown as pairs that will run."""
    slots = next(r.value for r in plan_rows(plan) if r.key == "parallel slots")
    if plan.parallel > plan.task_count:
        n = plan.task_count
        assert f"{n} task{'s' if n != 1 else ''}: at most {n} pair" in slots, slots


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[ProgressOutput], list[ProgressOutput]]:
    """A run's answers as it went, and the ones a watcher happened to see (the last always)."""
    total = draw(st.integers(1, 6))
    lanes = draw(st.integers(1, 2))
    answers = [ProgressOutput(run_id="r", phase="running", total=total, approved_by="ann")]
    completed = infra = 0
    end = draw(st.sampled_from(["reporting", "completed"]))
    for done in range(1, total + 1):
        completed += lanes
        infra += draw(st.integers(0, 2))
        left = tuple(f"t{i}" for i in range(done + 1, total + 1))
        answers.append(
            ProgressOutput(
                run_id="r",
                phase="running" if done < total else end,
                total=total,
                done=done,
                running=left[:2],
                by_class={"completed": completed, **({"infra_rate_limit": infra} if infra else {})},
                approved_by="ann",
            )
        )
    if answers[-1].phase == "reporting":
        answers.append(answers[-1].model_copy(update={"phase": "completed"}))
    seen = [a for a in answers[:-1] if draw(st.booleans())] + [answers[-1]]
    return answers, seen


@given(runs())
def test_the_lines_count_up_and_name_the_attempts_of_the_pairs_done(
    run: tuple[list[ProgressOutput], list[ProgressOutput]],
) -> None:
    answers, seen = run
    attempts_at = {a.done: sum(a.by_class.values()) for a in answers}
    said = ProgressLines()
    lines = [line for p in seen for line in said.lines(p, [], NOW)]
    counts = []
    for line in lines:
        m = re.search(r"done: (\d+)/(\d+) pairs", line)
        if m is None:
            continue
        counts.append(int(m.group(1)))
        named = re.search(r"attempts: (.*)$", line)
        if named is not None:
            shown = sum(int(n) for n in re.findall(r" (\d+)", named.group(1)))
            assert shown == attempts_at[int(m.group(1))], (line, lines)
    total = answers[-1].total
    assert counts == list(range(1, total + 1)), lines
    assert lines[-1] == "r: completed", lines
    done_at = max(i for i, line in enumerate(lines) if "done: " in line)
    ends = [i for i, line in enumerate(lines) if line in ("r: reporting", "r: completed")]
    assert all(i > done_at for i in ends), lines
