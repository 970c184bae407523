"""Every file a run publishes against the manifest its history recorded when it was written.

``record_attempt`` returns the manifest of the attempt's directory (every file a reader of
the attempt sees: the trajectory, the verifier's output, the final message, the build log,
the instruction...), and ``write_report`` that of the run's own files (``plan.json`` with
its tasks and counterparts, ``run.json``, the final scores, results and reports). A file
that differs from its entry, is missing, or has no entry is named, whatever it feeds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from durabench.audit.digest import file_digest, listing
from durabench.audit.names import top_level_files
from durabench.models.audit import FileDigest, Finding, Manifest
from durabench.models.run import RunPlan
from durabench.settings.paths import RunPaths
from durabench.wording import counted

__all__ = ["check_run_files", "compare"]


def compare(
    recorded: Manifest, found: Mapping[str, Path], *, skip: Collection[str] = ()
) -> list[tuple[str, str]]:
    """``(name, what happened to it)`` for each file that is not as ``recorded``.

    ``found`` is what is there now (:func:`~durabench.audit.digest.listing`); names in
    ``skip`` are checked elsewhere.
    """
    out = []
    for name in sorted(recorded.keys() | found.keys()):
        if name in skip:
            continue
        then, path = recorded.get(name), found.get(name)
        if then is None:
            out.append((name, "was added"))
        elif path is None:
            out.append((name, "was deleted"))
        else:
            now = file_digest(path)
            if now is None:
                out.append((name, "was replaced by a link or a special file"))
            elif now != then:
                out.append((name, f"changed ({_short(then)} then, {_short(now)} now)"))
    return out


def _short(d: FileDigest) -> str:
    return f"{counted(d.size, 'byte')}, sha256 {d.sha256[:12]}…"


def check_run_files(paths: RunPaths, plan: RunPlan, recorded: Manifest) -> list[Finding]:
    """The run's own files against the manifest ``write_report`` left in its history.

    A name no run writes is named by the names check, not here.
    """
    known = top_level_files(paths, plan) | recorded.keys()
    found = {n: p for n, p in listing(paths.root, deep=False).items() if n in known}
    return [
        Finding(check="ledger", where=name, message=f"{what} after the run's report was written")
        for name, what in compare(recorded, found)
    ]
