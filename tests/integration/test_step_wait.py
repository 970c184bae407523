"""Waiting for a detached step costs an exec now and then, not a marker read per poll.

``run_agent`` runs the agent as a detached step and waits for its end marker. Read from
the worker, each check was an archive read through the daemon: every 50 ms doubling to a
second, so an instant agent took most of a second to be seen done (2.05x ``docker run``
in ``bench/sandbox.py``) and an hour-long one cost two reads a second. The wait now runs
in the sandbox, as root (the agent cannot stop it): one exec returns when ``.done``
records the end, and the markers still decide how the step ended (issue 22).
"""

from __future__ import annotations

import pytest

from durabench.sandbox import DockerSandbox
from durabench.sandbox.detached import run_step
from tests.integration.test_dead_step import P, _script, box  # noqa: F401  (the fixture)

pytestmark = pytest.mark.docker


async def test_a_step_is_waited_for_in_the_sandbox_not_polled(
    box: DockerSandbox,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []
    read_file = box.read_file

    async def counted(path: str, *args: object, **kwargs: object) -> str:
        reads.append(path)
        return await read_file(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(box, "read_file", counted)
    step = _script("sleep 3; echo ok", n=2)
    end, again = await run_step(box, step, P.steps, 2, poll_s=1.0, launched=P.launches)
    assert (end.exit_code, end.timed_out, again) == (0, False, False)
    assert await read_file(f"{P.output}/stdout.txt") == "ok\n"
    # Before the step, after its end: a poll from the worker read the markers about 8 times.
    assert len(reads) <= 4, reads
