"""Read a task directory into a :class:`TaskSpec`.

``task.toml`` may be in CodeScaleBench's dialect, Harbor's, or both
(:mod:`durabench.tasks.dialects`).

A task directory holds ``task.toml``, ``instruction.md`` (``instruction_mcp.md`` for MCP
lanes, optional), ``environment/Dockerfile`` (and variants such as ``Dockerfile.sg_only``),
``tests/test.sh`` writing the reward file, and optionally ``solution/solve.sh``.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from durabench.documents import loads_toml
from durabench.errors import ConfigError, TaskFormatError
from durabench.ids import check_id
from durabench.models.task import TaskSpec
from durabench.tasks.dialects import (
    HARBOR,
    HARBOR_BUILD_TIMEOUT_SEC,
    dialects_of,
    harbor_name_problem,
)
from durabench.tasks.files import task_files
from durabench.tasks.forgeable import runs_submission

__all__ = ["load_task"]

_REQUIRED = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh")

MAX_LIMIT_SEC = 7 * 24 * 3600.0
"""The longest time limit a task may set (a week): anything longer is a typo, and
``inf`` or ``1e308`` would not survive a Temporal timeout or a JSON payload."""


def _limit(root: Path, section: str, field: str, value: Any) -> float:
    """``value`` as a time limit in seconds, or the error naming the file and field.

    A task file is untrusted: a limit that is not a number, not finite, not above zero or
    above :data:`MAX_LIMIT_SEC` is refused when the task loads, so it never reaches a plan.
    """
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and math.isfinite(value) and 0 < value <= MAX_LIMIT_SEC:
        return float(value)
    raise TaskFormatError(
        f"{root / 'task.toml'}: [{section}] {field} = {value!r} is not a time limit: give "
        f"a number of seconds above 0 and at most {MAX_LIMIT_SEC:.0f} (a week)"
    )


def load_task(task_dir: Path | str) -> TaskSpec:
    """Read and check one task directory.

    Raises:
        TaskFormatError: the directory is missing a required file, ``task.toml`` is invalid or
            its task id is not an id (:mod:`durabench.ids`); the message names the file.
    """
    root = Path(task_dir).resolve()
    if not root.is_dir():
        raise TaskFormatError(f"{root}: not a directory; give the path of a task directory")
    if not (root / "task.toml").is_file():
        raise TaskFormatError(_missing(root, "task.toml"))
    _refuse_link_out(root, "task.toml")
    try:
        doc = loads_toml((root / "task.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise TaskFormatError(f"{root / 'task.toml'}: not valid TOML: {exc}") from exc
    for rel in _REQUIRED:
        if not (root / rel).is_file():
            raise TaskFormatError(_missing(root, rel, _section(doc, "environment")))
    _check_copied_files(root)
    return _spec_from_toml(root, doc)


def _missing(root: Path, rel: str, environment: dict[str, Any] | None = None) -> str:
    """The message for a missing required file.

    Harbor may run a task on a prebuilt ``[environment] docker_image`` with no Dockerfile;
    durabench builds every image (on its base image, with its tools), so it says how.
    """
    image = (environment or {}).get("docker_image")
    if rel == "environment/Dockerfile" and image:
        return (
            f"{root}: missing environment/Dockerfile; durabench does not run the prebuilt "
            f"[environment] docker_image {image!r}: add an environment/Dockerfile holding "
            f"'FROM {image}'"
        )
    return f"{root}: missing {rel}; a task directory needs {', '.join(_REQUIRED)}"


def _check_copied_files(root: Path) -> None:
    """Refuse links out of the task among what is read, built or copied into a sandbox.

    The instructions, ``tests/`` and ``solution/`` go into the container, and the
    Dockerfiles into the image build (the Docker client sends a Dockerfile that lies
    outside the context with it); a link in them to a host file
    (``tests/x -> ~/.aws/credentials``) would carry that file in.

    Raises:
        TaskFormatError: such a link; the message names it and where it points.
    """
    try:
        for sub in ("tests", "solution"):
            task_files(root / sub, task_dir=root)
    except ConfigError as exc:
        raise TaskFormatError(str(exc)) from exc
    dockerfiles = [f"environment/{p.name}" for p in (root / "environment").glob("Dockerfile*")]
    for rel in ("instruction.md", "instruction_mcp.md", "environment", *dockerfiles):
        _refuse_link_out(root, rel)


def _refuse_link_out(root: Path, rel: str) -> None:
    """Refuse ``root / rel`` if it is a link whose target lies outside the task.

    Raises:
        TaskFormatError: it is; the message names it, where it points and what to do.
    """
    path = root / rel
    if path.is_symlink() and not path.resolve().is_relative_to(root):
        raise TaskFormatError(
            f"{path} is a link to {path.resolve()}, outside the task; replace it with the "
            f"{'directory' if path.is_dir() else 'file'} itself"
        )


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    value = doc.get(name, {})
    return value if isinstance(value, dict) else {}


def _task_id(root: Path, task: dict[str, Any], meta: dict[str, Any]) -> str:
    """The task's id, checked by :mod:`durabench.ids`.

    ``[task] id``, else the part after ``/`` of Harbor's ``[task] name``, else
    ``[metadata] name``, else the directory's name. A Harbor name must be ``org/name``
    (:mod:`durabench.tasks.dialects`), and with an id too it must name the same task.
    """
    toml = root / "task.toml"
    harbor_name = task.get("name")
    if harbor_name is not None:
        problem = harbor_name_problem(harbor_name)
        if problem is not None:
            raise TaskFormatError(
                f"{toml}: [task] name {harbor_name!r} is not a Harbor task name ({problem}); "
                f"write it as org/name, such as 'myorg/{root.name}'"
            )
    if task.get("id"):
        value, where = str(task["id"]), f"{toml}: [task] id"
        if harbor_name is not None and str(harbor_name).split("/")[1] != value:
            raise TaskFormatError(
                f"{toml}: [task] id {value!r} and [task] name {harbor_name!r} name different "
                f"tasks (durabench reads the id, Harbor the name); make the name '<org>/{value}'"
            )
    elif harbor_name is not None:
        value, where = str(harbor_name).split("/")[1], f"{toml}: [task] name"
    elif meta.get("name"):
        value, where = str(meta["name"]), f"{toml}: [metadata] name"
    else:
        value, where = root.name, f"{root}: the task id (its directory name, as task.toml has none)"
    try:
        return check_id(value, where)
    except ConfigError as exc:
        raise TaskFormatError(str(exc)) from exc


def _time_limit(root: Path, task: dict[str, Any], agent: dict[str, Any]) -> float:
    """The agent's time limit in seconds, 600 if the task gives none.

    ``[task] time_limit_sec`` (CodeScaleBench) or ``[agent] timeout_sec`` (Harbor); refused
    when both are given and differ.
    """
    csb, harbor = task.get("time_limit_sec"), agent.get("timeout_sec")
    if csb is not None:
        csb = _limit(root, "task", "time_limit_sec", csb)
    if harbor is not None:
        harbor = _limit(root, "agent", "timeout_sec", harbor)
    if csb is not None and harbor is not None and csb != harbor:
        raise TaskFormatError(
            f"{root / 'task.toml'}: [task] time_limit_sec = {csb} but [agent] timeout_sec = "
            f"{harbor} (durabench reads the first, Harbor the second); make them equal"
        )
    return float(csb if csb is not None else harbor if harbor is not None else 600.0)


def _text(
    root: Path,
    first: dict[str, Any],
    first_name: str,
    field: str,
    second: dict[str, Any] | None = None,
    second_name: str = "",
) -> str:
    """``[first_name] field``, else ``[second_name] field``, else ``""``; text or refused.

    A list or a table would otherwise be shown (and filtered on) as its Python text.

    Raises:
        TaskFormatError: the value is not a TOML string; the message names the field.
    """
    for section, name in ((first, first_name), (second or {}, second_name)):
        if field not in section:
            continue
        value = section[field]
        if not isinstance(value, str):
            raise TaskFormatError(
                f"{root / 'task.toml'}: [{name}] {field} is a {type(value).__name__}, not "
                f'text; write it in quotes, such as {field} = "..."'
            )
        return value
    return ""


def _spec_from_toml(root: Path, doc: dict[str, Any]) -> TaskSpec:
    task = _section(doc, "task")
    meta = _section(doc, "metadata")
    verification = _section(doc, "verification")
    verifier = _section(doc, "verifier")
    environment = _section(doc, "environment")
    dialects = dialects_of(doc)
    build_default = HARBOR_BUILD_TIMEOUT_SEC if dialects == (HARBOR,) else 1800.0
    dockerfiles = tuple(
        sorted(p.name for p in (root / "environment").glob("Dockerfile*") if p.is_file())
    )
    try:
        task_id = _task_id(root, task, meta)
        return TaskSpec(
            task_id=task_id,
            task_dir=str(root),
            dialects=dialects,
            description=_text(root, meta, "metadata", "description", task, "task"),
            repo=_text(root, task, "task", "repo"),
            category=_text(root, task, "task", "category", meta, "metadata"),
            language=_text(root, task, "task", "language"),
            difficulty=_text(root, task, "task", "difficulty", meta, "metadata"),
            time_limit_sec=_time_limit(root, task, _section(doc, "agent")),
            verifier_command=_text(root, verification, "verification", "command")
            or "bash /tests/test.sh",
            build_command=_text(root, verification, "verification", "build_command") or None,
            verifier_timeout_sec=_limit(
                root, "verifier", "timeout_sec", verifier.get("timeout_sec", 600.0)
            ),
            build_timeout_sec=_limit(
                root,
                "environment",
                "build_timeout_sec",
                environment.get("build_timeout_sec", build_default),
            ),
            dockerfiles=dockerfiles,
            has_mcp_instruction=(root / "instruction_mcp.md").is_file(),
            has_solution=(root / "solution" / "solve.sh").is_file(),
            runs_submission=runs_submission(root, str(verification.get("command", ""))),
        )
    except (TypeError, ValueError) as exc:
        raise TaskFormatError(f"{root / 'task.toml'}: {exc}") from exc
