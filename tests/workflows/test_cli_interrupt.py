"""Ctrl-C at the approval wait says how to end the run it leaves waiting.

``python -m starter run`` in a subprocess on the session's dev server, with its own
in-process worker (Docker, the base image). The test waits for the approval hint, sends
SIGINT as a terminal's Ctrl-C does, and reads what the person is told.
"""

from __future__ import annotations

import asyncio
import getpass
import re
import signal
import sys
import uuid

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from durabench.settings.values import Settings
from tests.starter_cli import starter_async, starter_env
from workflows import run_workflow_id


async def _until(stream: asyncio.StreamReader, text: str) -> str:
    seen = ""
    while text not in seen:
        line = await asyncio.wait_for(stream.readline(), 120)
        if not line:
            raise AssertionError(f"the output ended before {text!r}:\n{seen}")
        seen += line.decode()
    return seen


async def _interrupted(settings: Settings, run_id: str) -> str:
    """What ``starter run`` says when Ctrl-C stops it at the approval wait (exit 130)."""
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "starter", "run", "--suite", "pytorch", "--run-id", run_id),
        env=starter_env(settings),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        if proc.stdout is None:
            raise AssertionError("no stdout")
        await _until(proc.stdout, f"python -m starter approve {run_id}")
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    said = out.decode() + err.decode()
    assert "Aborted!" not in said
    assert proc.returncode == 130, said
    return said


@pytest.mark.docker
async def test_ctrl_c_at_the_approval_wait_says_how_to_reject(
    settings: Settings, client: Client
) -> None:
    run_id = f"ctrl-c-{uuid.uuid4().hex[:6]}"
    said = await _interrupted(settings, run_id)
    assert f"python -m starter reject {run_id}" in said
    handle = client.get_workflow_handle(run_workflow_id(run_id))
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING

    # The command it names works with no worker running: the run's status says it waits.
    rejected = await starter_async(settings, "reject", run_id, "--reason", "not today")
    assert rejected.returncode == 0, rejected.stderr
    assert f"Rejection of run {run_id} sent" in rejected.stdout
    await handle.terminate("the test is over")  # no worker here will carry the rejection


def _commands(said: str) -> list[str]:
    """The commands in backticks of the Ctrl-C message, in the order printed."""
    line = next(x for x in said.splitlines() if x.startswith("Interrupted:"))
    return re.findall(r"`(python -m starter [^`]+)`", line)


@pytest.mark.docker
async def test_the_route_printed_on_ctrl_c_works_in_the_order_printed(
    settings: Settings, client: Client
) -> None:
    """Approve with no worker running, then run it here: the run completes, approved by name."""
    run_id = f"ctrl-c-{uuid.uuid4().hex[:6]}"
    said = await _interrupted(settings, run_id)
    route = _commands(said)
    # starter run made the plan here first: the Web UI's summary says what it costs.
    desc = await client.get_workflow_handle(run_workflow_id(run_id)).describe()
    summary = await desc.static_summary()
    assert summary is not None and "4 tasks × 2 lanes" in summary and "agent-hours" in summary
    assert route[:2] == [
        f"python -m starter approve {run_id}",
        f"python -m starter resume {run_id}",
    ]
    assert route[2].startswith(f"python -m starter reject {run_id}"), route  # the other way

    approved = await starter_async(settings, *route[0].split()[3:])  # no worker runs
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert "taken when a worker runs" in approved.stdout, approved.stdout
    status = await starter_async(settings, "status", run_id)
    assert f"python -m starter resume {run_id}" in status.stdout, status.stdout
    assert "starter approve` waits" not in status.stdout  # it does not any more

    resumed = await starter_async(settings, *route[1].split()[3:], timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    outcome = await client.get_workflow_handle(run_workflow_id(run_id)).result()
    assert outcome["status"] == "completed" and outcome["approved_by"] == getpass.getuser()
