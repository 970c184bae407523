"""A run's attempts as its results directory holds them, read without trusting them."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from durabench.models.audit import Finding
from durabench.models.results import AttemptResult
from durabench.settings.paths import RunPaths, attempt_number

__all__ = ["AttemptKey", "DiskAttempt", "read_attempts", "where"]


class AttemptKey(NamedTuple):
    """Task, lane and number of one attempt."""

    task_id: str
    lane: str
    attempt: int


class DiskAttempt(NamedTuple):
    """One ``result.json``, where it lies; ``result`` is ``None`` when it does not parse."""

    key: AttemptKey
    directory: Path
    result: AttemptResult | None


def where(key: AttemptKey) -> str:
    """The attempt as findings name it: its directory under ``tasks/``."""
    return f"{key.task_id}/{key.lane}/attempt-{key.attempt}"


def read_attempts(paths: RunPaths) -> tuple[dict[AttemptKey, DiskAttempt], list[Finding]]:
    """Every attempt directory with a ``result.json``, by the key its path gives.

    A file that does not parse, or that names another attempt than its directory (copied
    in from elsewhere), is a finding.
    """
    found: dict[AttemptKey, DiskAttempt] = {}
    findings: list[Finding] = []
    for path in paths.attempt_results():
        directory = path.parent
        number = attempt_number(directory.name)
        if number is None:  # not read: the names check names it
            continue
        key = AttemptKey(directory.parent.parent.name, directory.parent.name, number)
        try:
            result: AttemptResult | None = AttemptResult.model_validate_json(path.read_bytes())
        except (ValidationError, OSError) as exc:
            result = None
            findings.append(Finding(check="results", where=where(key), message=_unreadable(exc)))
        if result is not None:
            said = AttemptKey(result.task_id, result.lane, result.attempt)
            if said != key or result.run_id != paths.root.name:
                findings.append(
                    Finding(
                        check="results",
                        where=where(key),
                        message=f"result.json is run {result.run_id}'s {where(said)}: it was "
                        "copied here from another attempt",
                    )
                )
        found[key] = DiskAttempt(key, directory, result)
    return found, findings


def _unreadable(exc: Exception) -> str:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"result.json is not an attempt result ({first}): restore it or remove the attempt"
