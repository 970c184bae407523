"""The threads that blocking Docker calls run in: enough for every sandbox's long waits.

docker-py blocks, so each call runs in a thread. asyncio's default pool has
min(32, CPUs + 4) threads: 6 on a 2-CPU host. A detached step's waiter holds a thread for
up to 15 s and a verifier's exec for its whole run, so with more sandboxes than threads
every other Docker call of the worker (a provision, a collect, a marker read) queued
behind them. A pool of their own, larger than any host's sandbox count, keeps short calls
from waiting on long ones; an idle thread costs only its stack.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["in_thread"]

P = ParamSpec("P")
T = TypeVar("T")

_POOL = ThreadPoolExecutor(max_workers=256, thread_name_prefix="durabench-docker")


async def in_thread(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread`` over the Docker pool (the caller's context vars go along)."""
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_POOL, call)
