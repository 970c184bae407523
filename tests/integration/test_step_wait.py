"""Waiting for a detached step costs an exec now and then, not a marker read per poll.

``run_agent`` runs the agent as a detached step and waits for its end marker. Read from
the worker, each check was an archive read through the daemon: every 50 ms doubling to a
second, so an instant agent took most of a second to be seen done (2.05x ``docker run``
in ``bench/sandbox.py``) and an hour-long one cost two reads a second. The wait now runs
in the sandbox, as root (the agent cannot stop it): one exec returns when ``.done``
records the end, and the markers still decide how the step ended.
"""

from __future__ import annotations

import asyncio

import pytest

from durabench.sandbox import DockerSandbox
from durabench.sandbox.detached import run_step
from tests.integration.test_dead_step import GUARD_S, P, _script, box  # noqa: F401  (the fixture)

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


async def test_a_new_step_starts_and_is_waited_for_in_one_exec(
    box: DockerSandbox,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Checking for markers, starting the step and the first wait are one root exec.

    Counts, not timings: each read or exec is requests to the daemon (an exec is a
    ``runc`` process too), whatever the machine's load.
    """
    calls: list[str] = []
    for name in ("read_file", "read_bytes", "exec", "exec_detached"):
        real = getattr(box, name)

        def counted(*args: object, _real: object = real, _name: str = name, **kw: object) -> object:
            calls.append(_name)
            return _real(*args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(box, name, counted)
    step = _script("echo ok", n=3)
    end, again = await run_step(box, step, P.steps, 3, poll_s=1.0, launched=P.launches)
    assert (end.exit_code, end.timed_out, again) == (0, False, False)
    assert calls == ["exec"]
    monkeypatch.undo()
    assert await box.read_file(f"{P.output}/stdout.txt") == "ok\n"  # it ran, once
    end, again = await run_step(box, step, P.steps, 3, poll_s=1.0, launched=P.launches)
    assert (end.exit_code, again) == (0, True)  # found ended: not started again
    assert await box.read_file(f"{P.output}/stdout.txt") == "ok\n"


def _held(sb: DockerSandbox) -> int:
    """Long execs under way, counted through Docker directly: not through the threads under
    test, which a regression would leave all taken."""
    api = sb.client.api
    run = api.exec_create(sb.spec.name, ["sh", "-c", f"cat {P.output}/held | wc -l"])
    return int(api.exec_start(run))


async def test_long_execs_do_not_hold_up_other_docker_calls(
    box: DockerSandbox,  # noqa: F811
) -> None:
    """Waiters and verifiers block a thread each: more of them than asyncio's default pool
    (6 threads on 2 CPUs) held every other Docker call of the worker until one ended.

    The long execs end only when the test releases them, so none can end on its own
    before the read: no race with a clock. The guards only stop a hang into a failure.
    """
    await box.exec(["sh", "-c", f"echo ok > {P.output}/probe; : > {P.output}/held"], user="0")
    release = f"{P.output}/release"
    hold = f"echo >> {P.output}/held; while [ ! -e {release} ]; do sleep 0.1; done"
    long = [asyncio.create_task(box.exec(["sh", "-c", hold], user="0")) for _ in range(12)]
    try:
        for _ in range(300):
            if await asyncio.to_thread(_held, box) == 12:
                break
            await asyncio.sleep(0.1)
        assert await asyncio.to_thread(_held, box) == 12, "every long exec holds a thread"
        probe = await asyncio.wait_for(box.read_file(f"{P.output}/probe"), GUARD_S)
        assert probe == "ok\n"
        assert not any(task.done() for task in long)  # held until released, below
    finally:
        box.client.api.exec_start(box.client.api.exec_create(box.spec.name, ["touch", release]))
        await asyncio.gather(*long)
