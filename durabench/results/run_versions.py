"""Which agent CLI versions and images each lane of a run ran, and pairs that mixed them.

Beside them, the digest of the lock the planning worker was installed from
(:mod:`durabench.lock_file`): the rest of the system that made the numbers.

An agent CLI is part of the system under test: the same model behind two CLI generations
scores differently. The report, the dashboard and the export name them from the attempts'
own records (``cli_version``, ``agent_image_id``), so a number says what it measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from durabench.models.results import AttemptResult, RunResult

__all__ = ["lane_cli_versions", "lane_images", "mixed_pairs", "short_image_id", "version_lines"]

_ID_CHARS = 12
"""Hex characters of an image id shown: enough to tell images apart, as ``docker`` does."""


def short_image_id(image_id: str) -> str:
    """``sha256:0123456789ab`` of a full image id; ``""`` stays ``""``."""
    algo, _, digest = image_id.partition(":")
    return f"{algo}:{digest[:_ID_CHARS]}" if digest else image_id[:_ID_CHARS]


def _distinct(values: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(sorted({v for v in values if v}))


def lane_cli_versions(
    attempts: Iterable[AttemptResult], lanes: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """Each lane's distinct named CLI versions (empty: the agent is no CLI, or none named)."""
    done = list(attempts)
    return {lane: _distinct(a.cli_version for a in done if a.lane == lane) for lane in lanes}


def lane_images(
    attempts: Iterable[AttemptResult], lanes: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """Each lane's distinct agent images, by short id (empty before images were recorded)."""
    done = list(attempts)
    return {
        lane: _distinct(short_image_id(a.agent_image_id) for a in done if a.lane == lane)
        for lane in lanes
    }


def mixed_pairs(attempts: Iterable[AttemptResult]) -> dict[str, tuple[str, ...]]:
    """Tasks whose attempts ran more than one named CLI version, to those versions."""
    by_task: dict[str, set[str]] = {}
    for a in attempts:
        if a.cli_version:
            by_task.setdefault(a.task_id, set()).add(a.cli_version)
    return {task: tuple(sorted(v)) for task, v in sorted(by_task.items()) if len(v) > 1}


def _as_is(text: str) -> str:
    return text


def version_lines(result: RunResult, esc: Callable[[str], str] = _as_is) -> list[str]:
    """The agent CLI version and image each lane ran, and tasks whose attempts mixed them.

    ``esc`` escapes each named version for the report's format: a CLI names its own
    version, and a hostile one can name anything.
    """
    lanes, attempts = result.plan.lanes, result.attempts
    versions, images = lane_cli_versions(attempts, lanes), lane_images(attempts, lanes)
    lines = []
    if any(versions.values()):
        named = (esc(f"{lane} {', '.join(versions[lane]) or 'not named'}") for lane in lanes)
        lines.append(f"- agent CLI version: {'; '.join(named)}")
    if any(images.values()):
        ran = (esc(f"{lane} {', '.join(images[lane]) or 'not recorded'}") for lane in lanes)
        lines.append(f"- agent image: {'; '.join(ran)}")
    if result.plan.worker_lock:  # the dependency set the planning worker was installed from
        lines.append(f"- worker lock: {esc(result.plan.worker_lock)}")
    mixed = mixed_pairs(attempts)
    if mixed:
        said = esc(", ".join(f"{task} ({', '.join(v)})" for task, v in mixed.items()))
        lines.append(
            f"- **{len(mixed)} task(s) ran different CLI versions across attempts: {said}; "
            "their lanes are not compared on equal terms**"
        )
    return lines
