"""Read a Harbor-format task directory into a :class:`TaskSpec`.

A task directory holds ``task.toml``, ``instruction.md`` (``instruction_mcp.md`` for MCP
lanes, optional), ``environment/Dockerfile`` (and variants such as ``Dockerfile.sg_only``),
``tests/test.sh`` writing the reward file, and optionally ``solution/solve.sh``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from durabench.errors import ConfigError, TaskFormatError
from durabench.ids import check_id
from durabench.models.task import TaskSpec
from durabench.tasks.files import task_files

__all__ = ["load_task"]

_REQUIRED = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh")


def load_task(task_dir: Path | str) -> TaskSpec:
    """Read and check one task directory.

    Raises:
        TaskFormatError: the directory is missing a required file, ``task.toml`` is invalid or
            its task id is not an id (:mod:`durabench.ids`); the message names the file.
    """
    root = Path(task_dir).resolve()
    if not root.is_dir():
        raise TaskFormatError(f"{root}: not a directory; give the path of a task directory")
    for rel in _REQUIRED:
        if not (root / rel).is_file():
            raise TaskFormatError(
                f"{root}: missing {rel}; a Harbor task needs {', '.join(_REQUIRED)}"
            )
    try:
        doc = tomllib.loads((root / "task.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{root / 'task.toml'}: not valid TOML: {exc}") from exc
    _check_copied_files(root)
    return _spec_from_toml(root, doc)


def _check_copied_files(root: Path) -> None:
    """Refuse links out of the task among what is copied into a sandbox.

    The instructions, ``tests/`` and ``solution/`` go into the container; a link in them
    to a host file (``tests/x -> ~/.aws/credentials``) would carry that file in.

    Raises:
        TaskFormatError: such a link; the message names it and where it points.
    """
    try:
        for sub in ("tests", "solution"):
            task_files(root / sub, task_dir=root)
        for name in ("instruction.md", "instruction_mcp.md"):
            if (root / name).is_symlink() and not (root / name).resolve().is_relative_to(root):
                raise ConfigError(
                    f"{root / name} is a link to {(root / name).resolve()}, outside the task; "
                    "replace it with the file itself"
                )
    except ConfigError as exc:
        raise TaskFormatError(str(exc)) from exc


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    value = doc.get(name, {})
    return value if isinstance(value, dict) else {}


def _task_id(root: Path, task: dict[str, Any], meta: dict[str, Any]) -> str:
    """``[task] id``, else ``[metadata] name``, else the directory's name; checked."""
    if task.get("id"):
        value, where = str(task["id"]), f"{root / 'task.toml'}: [task] id"
    elif meta.get("name"):
        value, where = str(meta["name"]), f"{root / 'task.toml'}: [metadata] name"
    else:
        value, where = root.name, f"{root}: the task id (its directory name, as task.toml has none)"
    try:
        return check_id(value, where)
    except ConfigError as exc:
        raise TaskFormatError(str(exc)) from exc


def _spec_from_toml(root: Path, doc: dict[str, Any]) -> TaskSpec:
    task = _section(doc, "task")
    meta = _section(doc, "metadata")
    verification = _section(doc, "verification")
    verifier = _section(doc, "verifier")
    environment = _section(doc, "environment")
    task_id = _task_id(root, task, meta)
    dockerfiles = tuple(
        sorted(p.name for p in (root / "environment").glob("Dockerfile*") if p.is_file())
    )
    try:
        return TaskSpec(
            task_id=task_id,
            task_dir=str(root),
            description=str(meta.get("description", "")),
            repo=str(task.get("repo", "")),
            category=str(task.get("category", "")),
            language=str(task.get("language", "")),
            difficulty=str(task.get("difficulty", "")),
            time_limit_sec=float(task.get("time_limit_sec", 600.0)),
            verifier_command=str(verification.get("command", "bash /tests/test.sh")),
            build_command=str(verification["build_command"])
            if "build_command" in verification
            else None,
            verifier_timeout_sec=float(verifier.get("timeout_sec", 600.0)),
            build_timeout_sec=float(environment.get("build_timeout_sec", 1800.0)),
            dockerfiles=dockerfiles,
            has_mcp_instruction=(root / "instruction_mcp.md").is_file(),
            has_solution=(root / "solution" / "solve.sh").is_file(),
        )
    except (TypeError, ValueError) as exc:
        raise TaskFormatError(f"{root / 'task.toml'}: {exc}") from exc
