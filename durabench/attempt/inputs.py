"""What a worker accepts from an attempt's workflow input, checked before it touches anything.

Anyone who can start a workflow on the task queue writes the attempt's input, not only
``python -m starter run`` after its plan checks: a sandbox on a network that reaches an
unauthenticated Temporal frontend can too. Three fields of it reach the worker's host:

* the task directory, read, built into an image and copied into the sandbox: only under
  the worker's task roots (:func:`task_roots`), so ``/etc`` or a home directory is never
  a task;
* the agent's mounts, host directories bound into the container read-write: only under
  ``DURABENCH_HOME/mounts/`` (:func:`mount_root`), never the rest of the home, whose
  ``runs/``, ``agent-tools/`` and ``temporal.db`` an agent could otherwise rewrite;
* the agent's ``version`` option, which the worker hands to ``npm install`` on its host:
  only a plain version number (:meth:`~durabench.agents.CliAgent.check_version`).

Symlinks are resolved before a path is compared, so a link under a root that leads out
of it is refused as what it leads to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from durabench.agents import CliAgent
from durabench.attempt.setup import AttemptSetup
from durabench.errors import ConfigError
from durabench.models.attempt import AttemptRef
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR

__all__ = [
    "CheckedAttempt",
    "check_attempt_inputs",
    "check_mounts",
    "check_task_dir",
    "mount_root",
    "task_roots",
]

_SHOWN = 200
"""Characters of a refused path quoted in a message."""


def task_roots(settings: Settings) -> tuple[Path, ...]:
    """Where this worker accepts task directories, symlinks resolved.

    The bundled suites, ``DURABENCH_HOME/suites``, the dataset tasks each run writes
    (``runs/<run>/dataset/``) and every ``DURABENCH_TASK_ROOTS`` entry. Not the rest of the
    home: ``runs/`` also holds what agents wrote (their logs), which must never become a
    task whose Dockerfile the worker builds.
    """
    home = settings.home.resolve()
    fixed = (BUILTIN_SUITES_DIR, home / "suites", *settings.task_roots)
    return (*(p.resolve() for p in fixed), home / "runs" / _ANY / "dataset")


def mount_root(settings: Settings) -> Path:
    """The only host directory whose subdirectories an agent may mount."""
    return (settings.home / "mounts").resolve()


_ANY = "*"
"""A root's part that stands for any one name (a run's id)."""


def _inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` is strictly below one of ``roots`` (a root itself is not)."""
    return any(_below(path.parts, root.parts) for root in roots)


def _below(parts: tuple[str, ...], root: tuple[str, ...]) -> bool:
    head = parts[: len(root)]
    return len(parts) > len(root) and all(r in (_ANY, p) for p, r in zip(head, root, strict=True))


def _shown(path: str) -> str:
    return path if len(path) <= _SHOWN else path[:_SHOWN] + "..."


def check_task_dir(task_dir: str | Path, roots: Sequence[Path]) -> Path:
    """Return ``task_dir`` resolved if it lies below one of ``roots``, else refuse it.

    Raises:
        ConfigError: it resolves outside every root (or to a root itself); the message
            names the roots and how to add one.
    """
    resolved = Path(task_dir).resolve()
    if _inside(resolved, roots):
        return resolved
    where = "" if str(resolved) == str(task_dir) else f" (resolved: {_shown(str(resolved))})"
    raise ConfigError(
        f"task dir {_shown(str(task_dir))}{where} is not under a task root of this worker "
        f"({', '.join(str(r) for r in roots)}); put the task under DURABENCH_HOME/suites, or "
        "add the directory that holds it to DURABENCH_TASK_ROOTS on every worker"
    )


def check_mounts(mounts: Mapping[str, str], root: Path) -> dict[str, str]:
    """The agent's mounts with host paths resolved, if every one lies below ``root``.

    Raises:
        ConfigError: a host path resolves outside ``root`` (or to ``root`` itself); the
            message names it and where mounts may live.
    """
    checked = {}
    for host, dest in mounts.items():
        resolved = Path(host).resolve()
        if not _inside(resolved, [root]):
            raise ConfigError(
                f"the agent asks to mount host directory {_shown(host)} into the sandbox, "
                f"which is not under {root}; agents may mount only directories under "
                "DURABENCH_HOME/mounts/ of the worker: make it there (e.g. "
                f"--agent-opt marker_dir={root}/<name>)"
            )
        checked[str(resolved)] = dest
    return checked


class CheckedAttempt(NamedTuple):
    """An attempt's parts, resolved from an input the worker accepted."""

    setup: AttemptSetup
    mounts: dict[str, str]
    """The agent's mounts, host paths resolved: what the sandbox binds."""


def check_attempt_inputs(
    ref: AttemptRef, settings: Settings, environ: Mapping[str, str]
) -> CheckedAttempt:
    """Check ``ref`` against this worker's rules, then resolve its parts.

    The task directory and the ``version`` option are checked before anything is read;
    the agent's mounts once the agent is built (they depend on its options).

    Raises:
        ConfigError: the task directory, a mount or the version is refused (see
            :func:`check_task_dir`, :func:`check_mounts`,
            :meth:`~durabench.agents.CliAgent.check_version`), or the lane or agent is
            unknown or invalid here.
        TaskFormatError: the task directory is accepted but is not a valid task.
    """
    task_dir = check_task_dir(ref.task.task_dir, task_roots(settings))
    CliAgent.check_version(ref.agent.options.get("version"))
    task = ref.task.model_copy(update={"task_dir": str(task_dir)})
    setup = AttemptSetup.of(ref.model_copy(update={"task": task}), environ)
    mounts = check_mounts(setup.agent.mounts(setup.ctx), mount_root(settings))
    return CheckedAttempt(setup, mounts)
