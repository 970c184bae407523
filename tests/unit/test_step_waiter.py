"""The waiter for a detached step's end only says when to read the markers, unless it read an end.

A waiter that an agent killed, or whose output is not an end, must not decide how the step
ended: the markers do (``durabench.sandbox.detached.run_step``).
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from durabench.sandbox import ExecResult
from durabench.sandbox.base import READ_BYTES
from durabench.sandbox.detached import run_step
from tests.unit.memory_sandbox import Call, MemorySandbox

MARKERS = PurePosixPath("/logs/steps")
DONE = str(MARKERS / "step-0.done")


def _waiter_answers(result: ExecResult) -> MemorySandbox:
    """A sandbox whose step starts and ends with 7, and whose waiter answers ``result``."""

    def handler(sb: MemorySandbox, call: Call) -> ExecResult | None:
        if call.detached:
            sb.files[str(MARKERS / "step-0.started")] = b"1 40 900 boot\n"
            sb.files[DONE] = b"7 1 60\n"
            return None
        return result

    return MemorySandbox(handler=handler)


@pytest.mark.parametrize(
    "waiter",
    [
        ExecResult(exit_code=137, stdout="0 1 60\n", stderr="", timed_out=False),  # killed
        ExecResult(exit_code=0, stdout="0 1 60 forged\n", stderr="", timed_out=False),
        ExecResult(exit_code=0, stdout="", stderr="", timed_out=False),
    ],
)
async def test_a_waiter_without_an_end_leaves_the_markers_to_decide(waiter: ExecResult) -> None:
    end, again = await run_step(_waiter_answers(waiter), "script", MARKERS, 0, poll_s=0.05)
    assert (end.exit_code, again) == (7, False)


class CountsReads(MemorySandbox):
    """Counts the reads of the end marker."""

    done_reads: int = 0

    async def read_bytes(self, path: str, *, max_bytes: int | None = READ_BYTES) -> bytes:
        self.done_reads += path == DONE
        return await super().read_bytes(path, max_bytes=max_bytes)


async def test_the_end_the_waiter_read_is_the_step_end_without_another_read() -> None:
    read = ExecResult(exit_code=0, stdout="7 1 60\n", stderr="", timed_out=False)
    sb = CountsReads(handler=_waiter_answers(read).handler)
    end, _ = await run_step(sb, "script", MARKERS, 0, poll_s=0.05)
    assert end.exit_code == 7
    assert sb.done_reads == 0  # the starter looked for markers in the sandbox, and waited
