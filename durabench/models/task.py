"""A task, as read from its directory (CodeScaleBench's or Harbor's ``task.toml``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["TEXT_CATEGORY", "TaskSpec"]

TEXT_CATEGORY = "text"
"""The category of a question answered in the final message, with no change expected."""


class TaskSpec(BaseModel):
    """One benchmark task (``task.toml`` plus what its directory holds)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    """``[task] id`` (or the name part of Harbor's ``[task] name``): unique within a suite;
    used in workflow ids and paths."""
    task_dir: str
    """Absolute path of the task directory on the worker's host."""
    dialects: tuple[str, ...] = ("codescalebench",)
    """The ``task.toml`` dialects the file is valid in: ``codescalebench``, ``harbor`` or both
    (:mod:`durabench.tasks.dialects`)."""
    description: str = ""
    """``[metadata] description``, else Harbor's ``[task] description``."""
    repo: str = ""
    """``[task] repo``: the repository the task is about."""
    category: str = ""
    """``[task] category``; ``text`` (:data:`TEXT_CATEGORY`): the answer is the final message."""
    language: str = ""
    """``[task] language``."""
    difficulty: str = ""
    """``[task] difficulty``."""
    time_limit_sec: float = 600.0
    """``[task] time_limit_sec`` or Harbor's ``[agent] timeout_sec``: the agent's time limit
    before the multiplier."""
    verifier_command: str = "bash /tests/test.sh"
    """``[verification] command``: run in the container after the agent."""
    build_command: str | None = None
    """``[verification] build_command``: run after the agent; failing means "does not build"."""
    verifier_timeout_sec: float = 600.0
    """``[verifier] timeout_sec`` (Harbor), else 600 s."""
    build_timeout_sec: float = 1800.0
    """``[environment] build_timeout_sec``."""
    dockerfiles: tuple[str, ...] = ("Dockerfile",)
    """Dockerfile variants under ``environment/`` (``Dockerfile``, ``Dockerfile.sg_only``, ...)."""
    has_mcp_instruction: bool = False
    """Whether ``instruction_mcp.md`` exists."""
    has_solution: bool = False
    """Whether ``solution/solve.sh`` exists (needed by the oracle agent)."""
    runs_submission: str = ""
    """Where the task's tests run the agent's code (``tests/t.py:5: sys.path.insert(0,
    "/workspace")``): the tests run as root, so that code could write its own reward;
    ``""``: they do not, as far as their text shows (:mod:`durabench.tasks.forgeable`)."""
