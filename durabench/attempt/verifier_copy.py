"""The verifier's directory as the verify read it, kept on the host for the collect.

The verify reads the whole directory once, after the tests and the reaper: nothing of
the submission runs from then on, and nothing else runs in the sandbox before it is
removed, so the collect would read the very same files. The reward is taken from that
read, and the collect uses the copy instead of a read of its own (one archive read, and
the daemon's ``docker-tar`` process, fewer per attempt).

The copy is kept only as the collect would keep it: scrubbed of secrets before a byte is
written. It stands in for the collect's read only when the collect's own read would have
kept the same: the verify reads with the collect's limits but for the total, so the copy
is used when that read left nothing out and its files (counted before scrubbing) fit in
what the collect has left; otherwise the collect reads the sandbox as before. The verify
removes any copy before it runs the tests, so a copy is that of the last tests run here.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from durabench.documents import loads_json
from durabench.sandbox.limits import TreeRead
from durabench.sandbox.tarball import pack, unpack
from durabench.settings.secrets import scrub_bytes

__all__ = ["drop_verifier_copy", "keep_verifier_copy", "verifier_copy"]

_FILES = ".verifier-read.tar"
_FACTS = ".verifier-read.json"
"""Written last: a copy without it is not one."""


def drop_verifier_copy(store: Path) -> None:
    """Forget the copy of an earlier verify (before the tests run again)."""
    (store / _FACTS).unlink(missing_ok=True)
    (store / _FILES).unlink(missing_ok=True)


def keep_verifier_copy(store: Path, read: TreeRead, secrets: Sequence[str]) -> None:
    """Keep ``read`` (scrubbed) with the bytes it held before scrubbing.

    A read that left something out, or one that cannot be kept (a name the archive
    cannot hold, a full disk), is not kept: the collect reads the sandbox instead, and
    the verify is not failed for it.
    """
    if read.cut:
        return
    needles = [s.encode() for s in secrets]
    files = ((PurePosixPath("verifier", k), scrub_bytes(v, needles)) for k, v in read.files.items())
    try:
        (store / _FILES).write_bytes(pack(files))
        raw = sum(len(v) for v in read.files.values())
        (store / _FACTS).write_text(json.dumps({"bytes": raw}))
    except (OSError, ValueError, tarfile.TarError):  # UnicodeError is a ValueError
        drop_verifier_copy(store)


def verifier_copy(store: Path, budget: int) -> TreeRead | None:
    """The kept copy, when the collect's read within ``budget`` would keep the same.

    ``None``: no copy here (the verify ran on another host, or did not get that far),
    its read left something out, or it holds more than ``budget``.
    """
    try:
        facts = loads_json((store / _FACTS).read_text())
        archive = (store / _FILES).read_bytes()
    except (OSError, ValueError):
        return None
    if int(facts.get("bytes", budget + 1)) > budget:
        return None
    return TreeRead(unpack(archive))
