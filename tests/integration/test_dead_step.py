"""A detached step whose process died is seen dead on re-attach, not waited for.

The step runs in a container set up as an attempt's: its markers on a tmpfs volume (a
restart wipes them), the launch record on the container's own disk. Killed from outside
(as root, so it records no end) or gone with a container restart, the step makes the
re-attaching ``run_step`` raise :class:`AgentLost` (the attempt ends ``infra_other``);
today it waits for an end that never comes, or starts the step again.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from durabench.errors import AgentLost
from durabench.sandbox import DockerSandbox, SandboxSpec
from durabench.sandbox.detached import StepEnd, run_step, wrap_step
from durabench.sandbox.reaper import REAP_SCRIPT
from durabench.settings.paths import SandboxPaths
from durabench.settings.values import Settings

pytestmark = pytest.mark.docker

P = SandboxPaths()
GUARD_S = 60
"""Far past what a re-attach takes; a step seen as running is waited for past it."""


async def _box(settings: Settings, **spec: Any) -> DockerSandbox:
    """A container with an attempt's markers volumes (root's only) and launch directory."""
    sb = DockerSandbox(
        SandboxSpec(
            name=f"durabench-dead-step-{uuid.uuid4().hex[:8]}",
            image=settings.base_image,
            labels={"durabench.run": "dead-step"},
            tmpfs={str(P.steps): 16, str(P.output): 16},
            **spec,
        )
    )
    await sb.start()
    dirs = f"{P.launches} {P.steps} {P.output}"
    await sb.exec(["sh", "-c", f"mkdir -p {dirs} && chmod 700 {dirs}"], user="0")
    return sb


@pytest.fixture
async def box(settings: Settings) -> AsyncIterator[DockerSandbox]:
    sb = await _box(settings)
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


KILL_WRAPPER = r"""
for d in /proc/[0-9]*; do
  [ "${d#/proc/}" = $$ ] && continue
  case $(tr '\0' ' ' < $d/cmdline 2>/dev/null) in
    *step-0.done*timeout*) kill -KILL ${d#/proc/} && found=1 ;;
  esac
done
[ -n "$found" ]
"""
"""Kill step 0's root shell, the one that would record its end (an OOM kill, an operator)."""


def _script(command: str = "echo ran; sleep 600", n: int = 0) -> str:
    out = f">>{P.output}/stdout.txt 2>>{P.output}/stderr.txt"
    return wrap_step(command, P.steps, n, 600, out, launched=P.launches)


async def _launch(sb: DockerSandbox, script: str, n: int = 0) -> None:
    """Start step ``n`` detached, as a worker that then died did, and wait until it runs."""
    await sb.exec_detached(["sh", "-c", script], user="0")
    for _ in range(200):
        if (await sb.exec(["test", "-e", f"{P.steps}/step-{n}.started"], user="0")).exit_code == 0:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the step never started")


async def _reattach(sb: DockerSandbox, script: str, n: int = 0) -> tuple[StepEnd, bool]:
    """What a retried ``run_agent`` does: run the step unless it started; wait for its end."""
    step = run_step(sb, script, P.steps, n, poll_s=0.2, launched=P.launches)
    return await asyncio.wait_for(step, timeout=GUARD_S)


async def test_a_step_killed_from_outside_is_lost_not_waited_for(box: DockerSandbox) -> None:
    await _launch(box, _script())
    killed = await box.exec(["sh", "-c", KILL_WRAPPER], user="0")  # no end is recorded
    assert killed.exit_code == 0, killed
    await box.exec(["sh", "-c", REAP_SCRIPT], user="0")  # nor does what it ran
    done = await box.read_file(f"{P.steps}/step-0.done")
    assert done.split() == ["running"]
    with pytest.raises(AgentLost, match=r"step 0 .* no longer runs"):
        await _reattach(box, _script())


async def test_a_step_of_a_restarted_container_is_lost_not_run_again(box: DockerSandbox) -> None:
    await _launch(box, _script())
    await box.stop(delete=False)
    await box.start()  # a daemon restart or a reboot: every process gone, the tmpfs wiped
    with pytest.raises(AgentLost, match="restarted"):
        await _reattach(box, _script())
    ran = await box.exec(["test", "-e", f"{P.output}/stdout.txt"], user="0")
    assert ran.exit_code != 0, "the step ran again"  # its output went with the restart


BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
"""A fork bomb that survives failed forks: it holds every process slot of its container."""


@pytest.fixture
async def small_box(settings: Settings) -> AsyncIterator[DockerSandbox]:
    """An attempt's container with a small process limit: a bomb fills it in a moment."""
    sb = await _box(settings, pids_limit=48)
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


async def test_a_fork_bomb_stopped_from_outside_keeps_how_its_session_ended(
    small_box: DockerSandbox,
) -> None:
    await small_box.write_file("/tmp/bomb.py", BOMB)
    bomb = "echo said; setsid python3 /tmp/bomb.py >/dev/null 2>&1 < /dev/null & exit 7"
    end, _ = await _reattach(small_box, _script(bomb))
    assert end.exit_code == 7
    for _ in range(100):  # until Docker counts every slot held
        if await small_box.process_slots_left() == 0:
            break
        await asyncio.sleep(0.1)
    assert await small_box.process_slots_left() == 0
    await small_box.restart()  # no exec needed: the daemon freezes, copies, kills, starts
    assert (await small_box.process_slots_left() or 0) > 40  # the bomb is gone
    end, reattached = await _reattach(small_box, _script(bomb))  # a retried run_agent
    assert (end.exit_code, reattached) == (7, True)  # its end, never AgentLost, never rerun
    said = await small_box.read_file(f"{P.output}/stdout.txt")
    assert said == "said\n"  # the transcript outlived the restart
    modes = await small_box.exec(["stat", "-c", "%a %U", str(P.steps)], user="0")
    assert modes.stdout.split() == ["700", "root"]  # still root's only


async def test_a_step_of_a_stopped_container_is_lost(box: DockerSandbox) -> None:
    await _launch(box, _script())
    await box.stop(delete=False)  # the daemon restarted; nothing started the container again
    with pytest.raises(AgentLost, match="restarted"):
        await _reattach(box, _script())


async def test_a_live_step_is_still_reattached(box: DockerSandbox) -> None:
    quick = _script("sleep 3; echo ok", n=1)
    await _launch(box, quick, n=1)
    end, again = await _reattach(box, quick, n=1)
    assert again and (end.exit_code, end.timed_out) == (0, False)
    assert await box.read_file(f"{P.output}/stdout.txt") == "ok\n"  # it ran once


KILL_WAITER = r"""
i=0
while [ $i -lt 100 ]; do
  for d in /proc/[0-9]*; do
    case $(tr '\0' ' ' < $d/cmdline 2>/dev/null) in
      "sh -c p=; "*|"sh -c if command -v flock"*)
        kill -KILL ${d#/proc/} && echo killed >> /tmp/killed ;;
    esac
  done
  [ -e /tmp/killed ] && exit 7
  sleep 0.1; i=$((i + 1))
done
exit 9
"""
"""An agent running as root that kills the worker's waiter for its end (the exec that
started the step and waits, or a later round's: each is known by how its script starts),
then exits 7."""


async def test_an_agent_that_kills_the_waiter_still_ends_as_it_did(box: DockerSandbox) -> None:
    script = _script(KILL_WAITER, n=2)
    step = run_step(box, script, P.steps, 2, poll_s=0.2, launched=P.launches)
    end, again = await asyncio.wait_for(step, timeout=GUARD_S)
    assert (end.exit_code, end.timed_out, again) == (7, False, False)
    assert "killed" in await box.read_file("/tmp/killed")  # there was a waiter, and it died
