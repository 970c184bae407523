"""A step that starts while its markers are read is running, not wiped.

The step's shell writes ``.started``, then ``.done`` ("running"), then its launch record.
``step_state`` reads ``.done``, then ``.started``, then the record: a step that starts
between the last two reads left a record and no marker *read*, and was taken for a
sandbox whose markers a restart wiped (AgentLost: a live, paid session ended as infra and
ran again; CI saw it under load).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from durabench.sandbox.base import READ_BYTES
from durabench.sandbox.detached import step_state
from tests.unit.memory_sandbox import MemorySandbox

MARKERS = PurePosixPath("/logs/steps")
LAUNCHED = PurePosixPath("/var/lib/durabench/steps")


@dataclass
class StartsWhileRead(MemorySandbox):
    """The step starts (all three files written) right after ``.started`` is found missing."""

    begun: bool = False

    async def read_bytes(self, path: str, *, max_bytes: int | None = READ_BYTES) -> bytes:
        if path == str(MARKERS / "step-0.started") and not self.begun:
            self.begun = True
            self.files[path] = b"12 40 900 boot"
            self.files[str(MARKERS / "step-0.done")] = b"running".ljust(60) + b"\n"
            self.files[str(LAUNCHED / "step-0")] = b"40\n"
            raise FileNotFoundError(path)  # the read came first
        return await super().read_bytes(path, max_bytes=max_bytes)


async def test_a_step_that_starts_between_the_reads_runs() -> None:
    state = await step_state(StartsWhileRead(), MARKERS, 0, LAUNCHED)
    assert (state.started, state.end, state.wiped) == (True, None, False)


async def test_a_record_without_markers_is_a_wiped_sandbox() -> None:
    sandbox = MemorySandbox(files={str(LAUNCHED / "step-0"): b"40\n"})
    state = await step_state(sandbox, MARKERS, 0, LAUNCHED)
    assert (state.started, state.wiped) == (False, True)


async def test_nothing_written_is_a_step_not_yet_started() -> None:
    state = await step_state(MemorySandbox(), MARKERS, 0, LAUNCHED)
    assert (state.started, state.wiped) == (False, False)
