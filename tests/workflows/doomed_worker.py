"""A worker process whose ``run_agent`` runs until the process dies: kill -9 it mid-attempt.

``python -m tests.workflows.doomed_worker <address> <queue> <host id>`` prints ``agent``
when the attempt has started; its identity is a worker's of that host.
"""

from __future__ import annotations

import asyncio
import sys

from temporalio import activity
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from starter.orphans import worker_identity


@activity.defn(name="run_agent")
async def run_agent(ref: str) -> str:
    """Start, say so, and heartbeat for ever."""
    print("agent", flush=True)
    while True:
        activity.heartbeat("running")
        await asyncio.sleep(1.0)


async def main(address: str, queue: str, host: str) -> None:
    """Work on ``queue`` as a worker of ``host`` until killed."""
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    identity = worker_identity(host)
    async with Worker(client, task_queue=queue, activities=[run_agent], identity=identity):
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
