"""Which containers a bench counts as its own: the load guard's judgement rests on it.

A container counted as the bench's has its CPU counted as the run's, not as other work:
one of another user's containers taken for the bench's would let a busy round pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from _usage import COMPOSE_DIR, is_own_container  # noqa: E402  (bench/ holds scripts)

TASKS = Path("/tmp/durabench-bench-peer-abc123/home/suites/peer")


def test_the_benchs_durabench_runs_are_its_own() -> None:
    assert is_own_container({"durabench.run": "conc-1a2b3c"}, {"conc-1a2b3c"})


def test_another_durabench_run_is_not() -> None:
    assert not is_own_container({"durabench.run": "conc-ffffff"}, {"conc-1a2b3c"})


def test_an_unlabelled_container_is_not() -> None:
    assert not is_own_container({}, {"conc-1a2b3c"}, TASKS)


def test_harbors_trials_on_the_benchs_task_copies_are_its_own() -> None:
    labels = {COMPOSE_DIR: f"{TASKS}/tensor-gelu-001/environment"}
    assert is_own_container(labels, set(), TASKS)


def test_a_compose_project_elsewhere_is_not() -> None:
    sibling = {COMPOSE_DIR: f"{TASKS}2/t/environment"}  # its name only starts alike
    assert not is_own_container(sibling, set(), TASKS)
    assert not is_own_container({COMPOSE_DIR: str(TASKS)}, set(), TASKS)
    assert not is_own_container({COMPOSE_DIR: f"{TASKS}/t/environment"}, set())
