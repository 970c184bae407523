"""``python -m starter`` as a user types it, in a subprocess on a test's server and home."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from durabench.settings.values import Settings

__all__ = ["one_error", "starter", "starter_async", "starter_env"]


def starter_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of a user of ``settings``: its server, home and task queue; ``extra``."""
    return {
        **os.environ,
        "DURABENCH_HOME": str(settings.home),
        "TEMPORAL_ADDRESS": str(settings.temporal_address),
        "DURABENCH_TASK_QUEUE": settings.task_queue,
        "DURABENCH_BASE_IMAGE": settings.base_image,
    } | extra


def starter(
    settings: Settings, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m starter ARGS`` and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "starter", *args],
        env=starter_env(settings),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


async def starter_async(
    settings: Settings, *args: str, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """:func:`starter` while this event loop goes on (a worker of the test runs in it)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starter",
        *args,
        env=starter_env(settings, **env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    code = proc.returncode if proc.returncode is not None else -1
    return subprocess.CompletedProcess(args, code, out.decode(), err.decode())


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The refusal's one ``Error:`` line; fails on a traceback or any other stderr line."""
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), proc.stderr
    return lines[0]
