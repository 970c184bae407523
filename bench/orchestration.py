"""What durabench's orchestration costs: pairs/s through its real workflows vs. a bare pipeline.

``python bench/orchestration.py [--n 200] [--parallel 20] [--rounds 2]``

Both pipelines run on one fresh dev server in one process, with the same worker options and
the same number of tasks in flight, with activities that return at once:

- durabench: ``SuiteRunWorkflow`` -> ``PairedTaskWorkflow`` -> two ``AgentRunWorkflow``
  per task, with the fake activities of ``tests.workflows.fakes`` (instant agent); timed
  from the approval to the run's result.
- bare: one parent -> one child per task -> two trivial activities; timed from its start.
- same-shape bare: durabench's shape with nothing in it: one parent -> a pair child per
  task -> two attempt children, each running as many trivial activities (and local ones)
  as an attempt in ``tests/histories/agent_run.json`` does, and the pair's ``pair_done``
  signal. No target: durabench over it says what durabench's own code costs, and the
  same-shape over the bare pipeline what the shape (explicit phases) costs.

Rounds alternate the order (bare, durabench, durabench, bare, ...) so a load that changes
during the run weighs on both. The ratio is durabench's pairs/s over the bare tasks/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from pathlib import Path

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import (
    approve,
    bare_step,
    dev_server,
    instant_activities,
    machine,
    ratio_line,
    start_run,
)
from _workflows import (
    BareChild,
    BareJob,
    BareParent,
    ShapedAttempt,
    ShapedJob,
    ShapedPair,
    ShapedParent,
)
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from runtime.workflow_runner import workflow_runner
from workflows import WORKFLOWS

TARGET = 0.5
"""durabench at least half as fast as the bare pipeline."""

ATTEMPT_HISTORY = Path(__file__).resolve().parents[1] / "tests" / "histories" / "agent_run.json"
"""An attempt as the workflows run it today (re-recorded with them): the shape to copy."""


def yardstick_runner() -> SandboxedWorkflowRunner:
    """The yardsticks' module passed through, as durabench's ``workflows`` is: a fair race."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules("_workflows")
    return SandboxedWorkflowRunner(restrictions=restrictions)


def attempt_shape() -> tuple[int, int]:
    """Activities and local activities of one attempt, counted in its recorded history."""
    events = json.loads(ATTEMPT_HISTORY.read_text())["events"]
    activities = sum(1 for e in events if e["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED")
    local = sum(
        1
        for e in events
        if e.get("markerRecordedEventAttributes", {}).get("markerName") == "core_local_activity"
    )
    return activities, local


async def events_per_task(client: Client, queue: str, n: int) -> float:
    """History events of every workflow on ``queue``, per task: the work the server does."""
    await asyncio.sleep(2)  # visibility is eventually consistent
    total = 0
    async for wf in client.list_workflows(f'TaskQueue = "{queue}"'):
        total += wf.history_length
    return total / n


async def durabench_rate(client: Client, n: int, parallel: int) -> tuple[float, str]:
    """Pairs per second of one run of ``n`` tasks through the real workflows; its queue."""
    queue = f"bench-db-{uuid.uuid4().hex[:8]}"
    task_ids = [f"t{i:05d}" for i in range(n)]
    done: list[int] = []
    activities = instant_activities(queue, task_ids, on_record=lambda _: done.append(1))
    async with Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        workflow_runner=workflow_runner(),
        activities=activities,
    ):
        handle = await start_run(client, queue, n, parallel, run_id=queue)
        began = await approve(handle)
        outcome = await handle.result()
        elapsed = time.monotonic() - began
    if outcome.status != "completed" or len(done) != 2 * n:
        raise RuntimeError(f"durabench run ended {outcome.status} with {len(done)} attempts")
    return n / elapsed, queue


async def bare_rate(client: Client, n: int, parallel: int) -> tuple[float, str]:
    """Tasks per second of the bare pipeline; its queue."""
    queue = f"bench-bare-{uuid.uuid4().hex[:8]}"
    workflows = [BareParent, BareChild]
    async with Worker(
        client,
        task_queue=queue,
        workflows=workflows,
        workflow_runner=yardstick_runner(),
        activities=[bare_step],
    ):
        began = time.monotonic()
        ended = await client.execute_workflow(
            BareParent.run, BareJob(tasks=n, parallel=parallel), id=queue, task_queue=queue
        )
        elapsed = time.monotonic() - began
    if ended != n:
        raise RuntimeError(f"bare pipeline ended {ended} of {n} children")
    return n / elapsed, queue


async def shaped_rate(client: Client, n: int, parallel: int) -> tuple[float, str]:
    """Pairs per second of the same-shape bare pipeline; its queue."""
    queue = f"bench-shape-{uuid.uuid4().hex[:8]}"
    activities, local = attempt_shape()
    job = ShapedJob(tasks=n, parallel=parallel, activities=activities, local_activities=local)
    workflows = [ShapedParent, ShapedPair, ShapedAttempt]
    async with Worker(
        client,
        task_queue=queue,
        workflows=workflows,
        workflow_runner=yardstick_runner(),
        activities=[bare_step],
    ):
        began = time.monotonic()
        ended = await client.execute_workflow(ShapedParent.run, job, id=queue, task_queue=queue)
        elapsed = time.monotonic() - began
    if ended != n:
        raise RuntimeError(f"same-shape pipeline ended {ended} of {n} pairs")
    return n / elapsed, queue


async def main() -> None:
    """Run the rounds and print each figure, then the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="tasks per round and pipeline")
    parser.add_argument("--parallel", type=int, default=20, help="tasks in flight")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both pipelines")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"tasks per round: {args.n}, parallel: {args.parallel}, rounds: {args.rounds}")
    activities, local = attempt_shape()
    print(f"an attempt's shape ({ATTEMPT_HISTORY.name}): {activities} activities, {local} local")
    rates: dict[str, list[float]] = {"bare": [], "durabench": [], "shape": []}
    runs = {"bare": bare_rate, "durabench": durabench_rate, "shape": shaped_rate}
    async with dev_server() as client:
        for r in range(args.rounds):
            order = ["bare", "shape", "durabench"]
            order = order if r % 2 == 0 else order[::-1]
            for name in order:
                rate, queue = await runs[name](client, args.n, args.parallel)
                rates[name].append(rate)
                print(f"round {r + 1} {name:9}: {rate:6.2f} pairs/s")
                if r == 0:
                    events = await events_per_task(client, queue, args.n)
                    print(f"        {name} history events per task: {events:.0f}")
    # Harmonic mean: the rate of all rounds' tasks over all rounds' time.
    mean = {k: len(v) / sum(1 / x for x in v) for k, v in rates.items()}
    print(
        f"bare pipeline: {mean['bare']:.2f} pairs/s; same-shape bare: {mean['shape']:.2f} "
        f"pairs/s; durabench: {mean['durabench']:.2f} pairs/s"
    )
    print(f"load after: {machine().rsplit('load ', 1)[1]}")
    shape = mean["shape"] / mean["bare"]
    print(ratio_line("orchestration same-shape bare/bare pairs/s", shape, None))
    own = mean["durabench"] / mean["shape"]
    print(ratio_line("orchestration durabench/same-shape bare pairs/s", own, None))
    ratio = mean["durabench"] / mean["bare"]
    print(
        ratio_line("orchestration durabench/bare pairs/s", ratio, f">= {TARGET}x", ratio >= TARGET)
    )


if __name__ == "__main__":
    asyncio.run(main())
