"""A command's event loop, whose end waits for nothing the command left behind.

``asyncio.run`` ends by cancelling every task left and waiting for each to finish, then
waiting for every call still running in its thread pool. A command that was interrupted
leaves such work by design (a Docker call in a thread, a worker's pollers, the Temporal
client's calls), and none of it ever needs finishing here: what the command does not
wait for, Temporal redoes or the next command sweeps. So the end gives cancelled tasks
:data:`TEARDOWN_S` and leaves threads running; the process's exit ends them
(:func:`starter.main.main` exits without the interpreter's teardown).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["TEARDOWN_S", "run_command"]

R = TypeVar("R")

TEARDOWN_S = 5.0
"""How long the tasks a command left get to end once cancelled."""


def run_command(main: Coroutine[Any, Any, R]) -> R:
    """Run ``main`` as ``asyncio.run`` does (Ctrl-C cancels it), with a bounded end."""
    runner = asyncio.Runner()
    loop = runner.get_loop()
    threads = ThreadPoolExecutor(thread_name_prefix="command")
    loop.set_default_executor(threads)
    try:
        return runner.run(main)
    finally:
        try:
            _cancel_left(loop)
        finally:
            threads.shutdown(wait=False, cancel_futures=True)
            loop.close()


def _cancel_left(loop: asyncio.AbstractEventLoop) -> None:
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in left:
        task.cancel()
    if left:
        loop.run_until_complete(asyncio.wait(left, timeout=TEARDOWN_S))
    ending = loop.create_task(loop.shutdown_asyncgens())
    loop.run_until_complete(asyncio.wait([ending], timeout=TEARDOWN_S))
