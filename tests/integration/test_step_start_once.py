"""Two starters of one step at once launch it once: the look and the launch hold a lock.

A step's start is one root exec that looks for the step's markers and, finding none,
launches it. Two such execs at once (a restarted worker's retry beside its predecessor's,
two workers of a host taking over together) could both find nothing, and both launch a
paid session. The window is the launch itself, until the step writes its first marker;
here a ``setsid`` that takes a second to start the step holds it open, so the second
starter is sure to look inside it.
"""

from __future__ import annotations

import asyncio

import pytest

from durabench.sandbox import DockerSandbox
from durabench.sandbox.detached import run_step
from tests.integration.test_dead_step import P, _script, box  # noqa: F401  (the fixture)

pytestmark = pytest.mark.docker

SLOW_SETSID = '#!/bin/sh\nsleep 1\nexec /usr/bin/setsid "$@"\n'


async def test_two_starters_at_once_launch_the_step_once(box: DockerSandbox) -> None:  # noqa: F811
    await box.write_file("/usr/local/bin/setsid", SLOW_SETSID)
    await box.exec(["chmod", "755", "/usr/local/bin/setsid"], user="0")
    step = _script("echo launched >> /tmp/launches; sleep 3", n=3)

    async def start(after_s: float) -> tuple[int, bool]:
        await asyncio.sleep(after_s)
        end, reattached = await run_step(box, step, P.steps, 3, poll_s=1.0, launched=P.launches)
        return end.exit_code, reattached

    ends = await asyncio.gather(start(0.0), start(0.4))
    assert sorted(ends) == [(0, False), (0, True)]  # one launched it, one found it
    assert await box.read_file("/tmp/launches") == "launched\n"
