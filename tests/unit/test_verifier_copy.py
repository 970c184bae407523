"""The verifier's directory is read once, by the verify, and its copy is what the collect keeps.

After the tests and the reaper nothing runs in the sandbox, so the collect would read the
same files again; it reads them again only when the copy would keep other files than its
own read (over what its budget has left).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from durabench.attempt import Attempt, AttemptSetup
from durabench.attempt.limits import AttemptLimits
from durabench.attempt.verifier_copy import drop_verifier_copy, keep_verifier_copy, verifier_copy
from durabench.sandbox import ExecResult
from durabench.sandbox.limits import ReadLimits, TreeRead
from durabench.settings.secrets import REDACTED
from tests.unit.memory_sandbox import Call, MemorySandbox
from tests.unit.test_attempt import SECRET, P, _attempt, _ref, _verifier


def _verifier_saying(reward: bytes, said: str) -> Any:
    """The verifier of :func:`_verifier`, which also prints ``said`` to its own log."""
    verifier = _verifier(reward)

    def handle(sb: MemorySandbox, call: Call) -> ExecResult | None:
        done = verifier(sb, call)
        if "/tests/test.sh" in call.cmd[-1]:
            sb.files[f"{P.verifier_logs}/verifier-stdout.txt"] = said.encode()
        return done

    return handle


def test_the_collect_keeps_the_verifier_directory_as_the_verify_read_it(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier_saying(b"1.0\n", f"saw {SECRET}\n"))
    attempt = _attempt(tmp_path, sb)
    assert asyncio.run(attempt.verify()).reward == 1.0
    assert not any(SECRET.encode() in f.read_bytes() for f in tmp_path.glob(".verifier-read*"))
    sb.files[str(P.reward)] = b"0.0\n"  # nothing runs after the tests: the collect reads no more
    asyncio.run(attempt.collect())
    assert (tmp_path / "verifier" / "reward.txt").read_bytes() == b"1.0\n"
    assert (tmp_path / "verifier" / "verifier-stdout.txt").read_text() == f"saw {REDACTED}\n"


def test_a_verifier_directory_over_what_the_collect_has_left_is_read_again(
    tmp_path: Path,
) -> None:
    sb = MemorySandbox(handler=_verifier_saying(b"1.0\n", "x" * 60))
    ref = _ref()
    logs = ReadLimits(max_total_bytes=100)
    attempt = Attempt(
        ref, AttemptSetup.of(ref, {}), sb, store=tmp_path, limits=AttemptLimits(logs=logs)
    )
    assert asyncio.run(attempt.verify()).reward == 1.0  # its read holds 64 bytes of 100
    sb.files[f"{P.output}/stdout.txt"] = b"y" * 90  # the collect has 10 left for it
    sb.files[str(P.reward)] = b"0.5\n"
    asyncio.run(attempt.collect())
    assert (tmp_path / "verifier" / "reward.txt").read_bytes() == b"0.5\n"  # read again


def test_a_read_that_left_something_out_is_not_a_copy(tmp_path: Path) -> None:
    files = {"reward.txt": b"1.0\n", "log.txt": b"ok"}
    keep_verifier_copy(tmp_path, TreeRead(files, ("log2.txt: over the cap, left out",)), ())
    assert verifier_copy(tmp_path, 1 << 20) is None
    keep_verifier_copy(tmp_path, TreeRead(files), ())
    assert verifier_copy(tmp_path, 6) == TreeRead(files)  # six bytes: they fit
    assert verifier_copy(tmp_path, 5) is None
    drop_verifier_copy(tmp_path)
    assert verifier_copy(tmp_path, 1 << 20) is None
