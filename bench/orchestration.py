"""What durabench's orchestration costs: pairs/s through its real workflows vs. a bare pipeline.

``python bench/orchestration.py [--n 200] [--parallel 20] [--rounds 2]``

Both pipelines run on one fresh dev server in one process, with the same worker options and
the same number of tasks in flight, with activities that return at once:

- durabench: ``SuiteRunWorkflow`` -> ``PairedTaskWorkflow`` -> two ``AgentRunWorkflow``
  per task, with the fake activities of ``tests.workflows.fakes`` (instant agent); timed
  from the approval to the run's result.
- bare: one parent -> one child per task -> two trivial activities; timed from its start.
- same-shape bare ("shape"): durabench's structure with nothing inside: one pair child per
  task -> two attempt children, each running as many trivial activities in sequence as an
  ``AgentRunWorkflow`` schedules (and the pair as many as a ``PairedTaskWorkflow``), the
  run counting each pair as it closes. The counts are read from the histories of a
  two-task durabench probe run before the rounds, so they follow the real workflows.

Rounds alternate the order (bare, shape, durabench, then reversed, ...) so a load that
changes during the run weighs on all three. Each run is a round of the load guard
(``_load.py``): repeated while the machine is busy, and no ratio unless all were calm.
The target ratio is durabench's pairs/s over the bare tasks/s. A second ratio, durabench
over the same shape (no target), splits the gap: what is left below 1.0x is durabench's
own code; what the shape loses against bare is the cost of the explicit phases (style
rule 7).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import time
import uuid

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import (
    LoadGuard,
    add_tries,
    approve,
    bare_step,
    dev_server,
    instant_activities,
    machine,
    start_run,
)
from _workflows import (
    BareChild,
    BareJob,
    BareParent,
    Shape,
    ShapeAttempt,
    ShapeJob,
    ShapePair,
    ShapeRun,
)
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from runtime.workflow_runner import workflow_runner
from workflows import WORKFLOWS

TARGET = 0.5
"""durabench at least half as fast as the bare pipeline."""


def yardstick_worker(client: Client, queue: str, workflows: list[type]) -> Worker:
    """A worker of yardstick workflows and ``bare_step``.

    Their module is passed through the sandbox, as durabench's own are: a fair race.
    """
    restrictions = SandboxRestrictions.default.with_passthrough_modules("_workflows")
    return Worker(
        client,
        task_queue=queue,
        workflows=workflows,
        workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions),
        activities=[bare_step],
    )


async def events_per_task(client: Client, queue: str, n: int) -> float:
    """History events of every workflow on ``queue``, per task: the work the server does."""
    await asyncio.sleep(2)  # visibility is eventually consistent
    total = 0
    async for wf in client.list_workflows(f'TaskQueue = "{queue}"'):
        total += wf.history_length
    return total / n


async def _counts(client: Client, queue: str, kind: str) -> tuple[int, int]:
    """Activities and local activities in the history of one ``kind`` workflow on ``queue``."""
    async for wf in client.list_workflows(f'TaskQueue = "{queue}" AND WorkflowType = "{kind}"'):
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        remote = local = 0
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                remote += 1
            elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
                local += event.marker_recorded_event_attributes.marker_name.endswith(
                    "local_activity"
                )
        return remote, local
    raise RuntimeError(f"no {kind} on {queue}: cannot count its activities")


async def probe_shape(client: Client, parallel: int) -> Shape:
    """The activities per pair and per attempt of a two-task durabench run (untimed)."""
    _, queue = await durabench_rate(client, 2, parallel)
    await asyncio.sleep(2)  # visibility is eventually consistent
    pair, pair_local = await _counts(client, queue, "PairedTaskWorkflow")
    attempt, attempt_local = await _counts(client, queue, "AgentRunWorkflow")
    return Shape(pair, attempt, attempt_local, pair_local)


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
        workflow_runner=workflow_runner(),  # as the production worker runs them
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
    async with yardstick_worker(client, queue, workflows):
        began = time.monotonic()
        ended = await client.execute_workflow(
            BareParent.run, BareJob(tasks=n, parallel=parallel), id=queue, task_queue=queue
        )
        elapsed = time.monotonic() - began
    if ended != n:
        raise RuntimeError(f"bare pipeline ended {ended} of {n} children")
    return n / elapsed, queue


async def shape_rate(client: Client, n: int, parallel: int, shape: Shape) -> tuple[float, str]:
    """Pairs per second of the same-shape bare pipeline; its queue."""
    queue = f"bench-shape-{uuid.uuid4().hex[:8]}"
    workflows = [ShapeRun, ShapePair, ShapeAttempt]
    async with yardstick_worker(client, queue, workflows):
        began = time.monotonic()
        ended = await client.execute_workflow(
            ShapeRun.run,
            ShapeJob(tasks=n, parallel=parallel, shape=shape),
            id=queue,
            task_queue=queue,
        )
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
    add_tries(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"tasks per round: {args.n}, parallel: {args.parallel}, rounds: {args.rounds}")
    rates: dict[str, list[float]] = {"bare": [], "shape": [], "durabench": []}
    guard = LoadGuard(tries=args.tries)
    async with dev_server() as client:
        shape = await probe_shape(client, args.parallel)
        print(
            f"shape (from a durabench probe): pair {shape.pair_activities} activities"
            f" + {shape.pair_local} local, attempt {shape.attempt_activities} activities"
            f" + {shape.attempt_local} local"
        )

        async def shaped(client: Client, n: int, parallel: int) -> tuple[float, str]:
            return await shape_rate(client, n, parallel, shape)

        runs = {"bare": bare_rate, "shape": shaped, "durabench": durabench_rate}
        for r in range(args.rounds):
            order = ["bare", "shape", "durabench"]
            order = order if r % 2 == 0 else order[::-1]
            for name in order:
                run = functools.partial(runs[name], client, args.n, args.parallel)
                rate, queue = await guard.round(f"round {r + 1} {name}", run)
                rates[name].append(rate)
                print(f"round {r + 1} {name:9}: {rate:6.2f} pairs/s")
                if r == 0:
                    events = await events_per_task(client, queue, args.n)
                    print(f"        {name} history events per task: {events:.0f}")
    # Harmonic mean: the rate of all rounds' tasks over all rounds' time.
    mean = {k: len(v) / sum(1 / x for x in v) for k, v in rates.items()}
    print(
        f"bare pipeline: {mean['bare']:.2f} pairs/s; same-shape bare: {mean['shape']:.2f}"
        f" pairs/s; durabench: {mean['durabench']:.2f} pairs/s"
    )
    own = mean["durabench"] / mean["shape"]
    print(guard.ratio_line("orchestration durabench/same-shape bare pairs/s", own, None))
    ratio = mean["durabench"] / mean["bare"]
    met = ratio >= TARGET
    print(guard.ratio_line("orchestration durabench/bare pairs/s", ratio, f">= {TARGET}x", met))


if __name__ == "__main__":
    asyncio.run(main())
