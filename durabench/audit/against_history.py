"""The attempt files held against the run's durable history (its ledger).

History is append-only: what ``record_attempt`` returned there (the hashes of what it
wrote, and the manifest of every file the attempt left) is what the attempt was. A file
changed, deleted or added since is named. ``eval.json``, written after by the service's
grading, is held to its own record (:mod:`durabench.audit.grades`).
"""

from __future__ import annotations

from collections.abc import Mapping

from durabench.audit.digest import listing, sha256_file
from durabench.audit.disk import AttemptKey, DiskAttempt, where
from durabench.audit.manifest import compare
from durabench.models.audit import AttemptDigest, Finding, Ledger

__all__ = ["check_ledger"]


def check_ledger(
    ledger: Ledger, attempts: Mapping[AttemptKey, DiskAttempt]
) -> tuple[list[Finding], list[str]]:
    """Findings, and notes on what history cannot tell (attempts recorded before digests)."""
    out: list[Finding] = []
    notes: list[str] = []
    if ledger.run_ended != "completed":
        out.append(
            Finding(
                check="pairs",
                where="run",
                message=f"the run's workflow is {ledger.run_ended}, not completed: audit a "
                "run that finished",
            )
        )
    seen: set[AttemptKey] = set()
    for entry in ledger.attempts:
        key = AttemptKey(entry.task_id, entry.lane, entry.attempt)
        seen.add(key)
        on_disk = attempts.get(key)
        if entry.digest is not None:
            out += _against(key, entry.digest, on_disk)
            if entry.digest.manifest is None and on_disk is not None:
                notes.append(
                    f"{where(key)}: its history predates manifests; only "
                    f"{', '.join(entry.digest.files)} were checked"
                )
        elif on_disk is not None and entry.recorded:
            notes.append(f"{where(key)}: its history predates digests; its files were not checked")
        elif on_disk is not None:
            out.append(
                _ledger(
                    key,
                    f"its workflow ended {entry.ended} and nothing recorded it, yet "
                    "result.json exists: it was written after the fact",
                )
            )
    for key in sorted(attempts.keys() - seen):
        out.append(
            _ledger(
                key, "no such attempt workflow in the run's history: it was added after the fact"
            )
        )
    return out, notes


def _against(key: AttemptKey, digest: AttemptDigest, on_disk: DiskAttempt | None) -> list[Finding]:
    if on_disk is None:
        return [
            _ledger(key, "recorded in history, but its result.json is gone: deleted after the run")
        ]
    out = []
    for name, then in digest.files.items():
        current = sha256_file(on_disk.directory / name)
        if then == current:
            continue
        if then is None:
            what = "was added after the attempt was recorded"
        elif current is None:
            what = "was deleted after the attempt was recorded"
        else:
            what = (
                f"changed after the attempt was recorded (sha256 {then[:12]}… then, "
                f"{current[:12]}… now)"
            )
        out.append(_ledger(key, f"{name} {what}"))
    if digest.manifest is not None:
        skip = {*digest.files, _GRADE}
        for name, what in compare(digest.manifest, listing(on_disk.directory), skip=skip):
            out.append(_ledger(key, f"{name} {what} after the attempt was recorded"))
    return out


_GRADE = "eval.json"
"""Written after the attempt is recorded, by the service's grading: checked on its own."""


def _ledger(key: AttemptKey, message: str) -> Finding:
    return Finding(check="ledger", where=where(key), message=message)
