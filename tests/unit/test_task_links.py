"""No file a task directory is read or built from may be a link that leads out of it.

Issue 47 defect 12: a task.toml that was a link to a file outside the task was followed
(``instruction.md``'s was refused). The family check: each file the loader reads or a
sandbox gets (task.toml, the instructions, the Dockerfile, the tests and the solution),
and each directory that holds them, made a link to a copy outside the task: the task is
refused, naming the link and where it leads. A link that stays inside is still read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from durabench.errors import TaskFormatError
from durabench.tasks import load_task
from durabench.tasks.suites import BUILTIN_SUITES_DIR

LINKED = [
    "task.toml",
    "instruction.md",
    "instruction_mcp.md",
    "environment/Dockerfile",
    "tests/test.sh",
    "solution/solve.sh",
    "environment",
    "tests",
    "solution",
]
"""Every file and directory of a task that the loader reads, or a build or sandbox gets."""


def _task(tmp_path: Path) -> Path:
    task = tmp_path / "task"
    shutil.copytree(BUILTIN_SUITES_DIR / "pytorch" / "tensor-gelu-001", task)
    (task / "instruction_mcp.md").write_text("Use the MCP tools.\n")
    (task / "solution").mkdir(exist_ok=True)
    (task / "solution" / "solve.sh").write_text("#!/bin/bash\n")
    return task


@pytest.mark.parametrize("rel", LINKED)
def test_a_link_out_of_the_task_is_refused(tmp_path: Path, rel: str) -> None:
    task = _task(tmp_path)
    outside = tmp_path / "outside" / rel
    outside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(task / rel, outside)
    (task / rel).symlink_to(outside)
    with pytest.raises(TaskFormatError) as caught:
        load_task(task)
    assert str(task / rel) in str(caught.value) and "outside the task" in str(caught.value)


@pytest.mark.parametrize("rel", ["task.toml", "instruction.md", "environment/Dockerfile"])
def test_a_link_inside_the_task_is_read(tmp_path: Path, rel: str) -> None:
    task = _task(tmp_path)
    kept = task / "kept" / rel.replace("/", "-")
    kept.parent.mkdir(exist_ok=True)
    shutil.move(task / rel, kept)
    (task / rel).symlink_to(kept)
    assert load_task(task).task_id == "tensor-gelu-001"
