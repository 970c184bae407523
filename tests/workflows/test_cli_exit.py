"""The CLI leaves cleanly even when a Temporal call of its command is still in flight.

The Temporal client's Rust runtime has threads of its own; if the interpreter tears
itself down while one of them still works for Python (an RPC the command started and did
not wait for, a connection closing), the process hangs, aborts or dies of SIGSEGV after
the command has printed its result. ``python -m starter`` must exit with its command's
code whatever the runtime still does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_LINGERING = """
import asyncio, runpy, sys
import click
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from runtime.client import connect_when_ready
from starter.main import cli
from starter.options import run_async

async def core(address: str) -> None:
    client = await connect_when_ready(address, "default")
    request = GetSystemInfoRequest()
    calls = [asyncio.create_task(client.workflow_service.get_system_info(request))]
    await asyncio.sleep(0)  # sent, not awaited: in flight as the command ends
    raise click.ClickException("the command failed after starting a call")

@cli.command()
@click.argument("address")
def linger(address: str) -> None:
    run_async(core)(address)

sys.argv = ["starter", "linger", sys.argv[1]]
runpy.run_module("starter", run_name="__main__")
"""


def test_a_command_that_ends_with_a_call_in_flight_exits_with_its_code(
    temporal_address: str,
) -> None:
    for _ in range(5):  # on a loaded machine one exit in a few went wrong
        try:
            proc = subprocess.run(
                [sys.executable, "-c", _LINGERING, temporal_address],
                cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired as hung:
            raise AssertionError("the CLI hung at exit after printing its error") from hung
        assert "the command failed after starting a call" in proc.stderr
        assert proc.returncode == 1, proc.stderr[-2000:]
