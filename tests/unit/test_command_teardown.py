"""A command's end does not wait for work it started and no longer needs.

After Ctrl-C, ``python -m starter run`` says how to end the run it leaves and exits. What
the interrupted command had going (a Docker call in a thread, a task that ignores its
cancel) must not hold the exit: the process ends with its code, and the operating system
ends the rest.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from starter.options import run_async


def _ends(command: Callable[[], Coroutine[Any, Any, int]], release: threading.Event) -> bool:
    """Whether the command returns while what it left still waits on ``release``."""
    done = threading.Event()

    def call() -> None:
        run_async(command)()
        done.set()

    threading.Thread(target=call, daemon=True).start()
    try:
        return done.wait(60)
    finally:
        release.set()


def test_a_blocking_call_left_in_a_thread_does_not_hold_the_command() -> None:
    release = threading.Event()

    async def command() -> int:
        asyncio.get_running_loop().run_in_executor(None, release.wait)  # never awaited
        await asyncio.sleep(0)
        return 7

    assert _ends(command, release), "the command waited for the call it left behind"


def test_a_task_that_ignores_its_cancel_does_not_hold_the_command() -> None:
    release = threading.Event()

    async def stubborn() -> None:
        while not release.is_set():
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue  # as a library that swallows a cancel would

    async def command() -> int:
        asyncio.get_running_loop().create_task(stubborn())
        await asyncio.sleep(0)
        return 7

    assert _ends(command, release), "the command waited for a task that would not end"
