"""A service dataset's text tasks become Harbor task directories, one per id, or a clear no."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.service import V1DatasetTask
from durabench.service.datasets import write_text_tasks
from durabench.tasks import load_task


def test_each_question_becomes_a_task(tmp_path: Path) -> None:
    dirs = write_text_tasks(tmp_path, [V1DatasetTask(id="q:1", question="6 x 7?", timeout=120)])
    spec = load_task(dirs[0])
    assert (spec.task_id, spec.time_limit_sec) == ("q:1", 120)
    assert (dirs[0] / "instruction.md").read_text().startswith("6 x 7?")


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["a/b"], "cannot name a results directory"),
        ([".."], "cannot name a results directory"),
        (["Q1", "q1"], "lists task 'q1' twice"),
    ],
)
def test_ids_that_cannot_be_results_directories_are_refused(
    tmp_path: Path, ids: list[str], message: str
) -> None:
    tasks = [V1DatasetTask(id=i, question="?") for i in ids]
    with pytest.raises(ConfigError, match=message):
        write_text_tasks(tmp_path, tasks)


def test_a_task_without_a_question_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no question: only text tasks run"):
        write_text_tasks(tmp_path, [V1DatasetTask(id="q1")])
