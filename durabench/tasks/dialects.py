"""The two ``task.toml`` dialects durabench reads: CodeScaleBench's and Harbor's.

Both lay a task directory out the same way; their ``task.toml`` differ.

CodeScaleBench (what durabench was written against) names a task with ``[task] id`` and puts
its limits in ``[task] time_limit_sec``, ``[verifier] timeout_sec`` and
``[environment] build_timeout_sec``; the verifier command is ``[verification] command``.

Harbor 0.25 validates ``task.toml`` with the pydantic ``TaskConfig`` of
``src/harbor/models/task/config.py`` (repository harbor-framework/harbor, formerly
laude-institute/harbor). There ``[task]`` is optional, but when present it must hold
``name = "org/name"`` (``PackageInfo.name``, checked against ``ORG_NAME_PATTERN`` of
``src/harbor/constants.py`` and refused if it contains ``..``), and ``[task] description``
describes the task. The agent's limit is ``[agent] timeout_sec`` (``AgentConfig``, no
default), the verifier's ``[verifier] timeout_sec`` (``VerifierConfig``, 600 s) and the
image build's ``[environment] build_timeout_sec`` (``EnvironmentConfig``, 600 s);
``[metadata]`` is free-form (Harbor's own tasks keep ``difficulty`` and ``category`` there).
Unknown keys are ignored, so one file can be written in both dialects: CodeScaleBench's
``[task] id`` next to Harbor's ``[task] name``, equal limits in both places.

A Harbor task's id is the part of its name after ``/``, still checked by
:mod:`durabench.ids`; a file in both dialects must name the same task and give the same
time limit in both, or durabench and Harbor would run different tasks.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = [
    "CODESCALEBENCH",
    "DIALECT_NAMES",
    "HARBOR",
    "HARBOR_BUILD_TIMEOUT_SEC",
    "dialects_of",
    "harbor_name_problem",
]

CODESCALEBENCH: Final = "codescalebench"
HARBOR: Final = "harbor"
DIALECT_NAMES: Final = {CODESCALEBENCH: "CodeScaleBench", HARBOR: "Harbor"}
"""How each dialect is named to people."""

HARBOR_BUILD_TIMEOUT_SEC: Final = 600.0
"""Harbor's default ``[environment] build_timeout_sec``."""

_HARBOR_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*")
"""Harbor's ``ORG_NAME_PATTERN``: ``org/name``, each part a letter or digit first."""


def dialects_of(doc: dict[str, Any]) -> tuple[str, ...]:
    """The dialects ``doc`` (a parsed ``task.toml``) is written in, in a stable order.

    Harbor's when it has no ``[task]`` or a ``[task] name``; CodeScaleBench's when it has a
    ``[task]`` with an ``id`` or without a ``name`` (Harbor refuses that one).
    """
    task = doc.get("task")
    if not isinstance(task, dict):
        return (HARBOR,)
    found = []
    if "id" in task or "name" not in task:
        found.append(CODESCALEBENCH)
    if "name" in task:
        found.append(HARBOR)
    return tuple(found)


def harbor_name_problem(name: object) -> str | None:
    """What Harbor would refuse in ``[task] name``, or ``None`` if it accepts it."""
    if not isinstance(name, str):
        return f"it is a {type(name).__name__}, not a string"
    if not _HARBOR_NAME.fullmatch(name):
        return (
            "it is not 'org/name' (two parts joined by one '/', each of letters, digits, "
            "'.', '_' or '-', starting with a letter or digit)"
        )
    if ".." in name:
        return "it contains '..'"
    return None
