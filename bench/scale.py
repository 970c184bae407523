"""Does durabench hold up at suite scale? Throughput, history length, worker memory, carried state.

``python bench/scale.py [--small 100] [--large 1000] [--parallel 20] [--pairs auto]``
(``--large 10000`` for the full figure)

Each size runs on one fresh dev server, with a fresh worker process (``_worker.py``) and the
instant agent, timed from the approval to the run's result. Reported per size: pairs/s, the
longest history of each workflow type (the list API's ``history_length``, and for the run
itself the fetched histories), the worker's peak RSS (``VmHWM``), and the bytes of the
``CarriedState`` each continue-as-new hands to the next run (the input payload of the
``WorkflowExecutionContinuedAsNew`` event).

``--pairs stand-in`` (the default when ``--large`` is over 2,000) replaces the pair workflow
with an instant stand-in, as ``tests/workflows/test_history_bounds.py`` does: only the run
workflow's history grows with the suite, and full pairs run at a few pairs/s on 2 cores.
Both sizes then use the stand-in, so the throughput ratio compares like with like.
Each size is a round of the load guard (``_load.py``): repeated while the machine is
busy, and no ratio unless both were calm.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import LoadGuard, add_tries, approve, dev_server, machine, start_run
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

HISTORY_WARNING = 10_240
"""Temporal's per-workflow history event warning."""
RSS_LIMIT_MIB = 1024
THROUGHPUT_TARGET = 0.8


class SizeResult(NamedTuple):
    """The figures of one suite size."""

    tasks: int
    pairs_per_s: float
    longest: dict[str, int]
    """Longest history by workflow type."""
    runs: int
    """Workflow runs of the suite run (1 + continue-as-new count)."""
    carried_bytes: list[int]
    peak_rss_mib: float


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


async def _histories(client: Client, queue: str, run_wf: str) -> tuple[dict[str, int], list[int]]:
    """Longest history by workflow type; CarriedState sizes of the run's continue-as-new."""
    longest: dict[str, int] = defaultdict(int)
    async for wf in client.list_workflows(f'TaskQueue = "{queue}"'):
        longest[wf.workflow_type] = max(longest[wf.workflow_type], wf.history_length)
    carried: list[int] = []
    async for wf in client.list_workflows(f'WorkflowId = "{run_wf}"'):
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        longest["SuiteRunWorkflow"] = max(longest["SuiteRunWorkflow"], len(history.events))
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
                payloads = event.workflow_execution_continued_as_new_event_attributes.input
                carried.append(sum(len(p.data) for p in payloads.payloads))
    return dict(longest), carried


async def run_size(client: Client, tasks: int, parallel: int, pairs: str) -> SizeResult:
    """One run of ``tasks`` tasks, with its own worker process."""
    queue = f"bench-scale-{tasks}-{uuid.uuid4().hex[:8]}"
    address = client.service_client.config.target_host
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_worker.py")), "--address", address]
        + ["--queue", queue, "--tasks", str(tasks), "--pairs", pairs]
    )
    try:
        handle = await start_run(client, queue, tasks, parallel, run_id=queue)
        began = await approve(handle)
        outcome = await handle.result()
        elapsed = time.monotonic() - began
        rss = _peak_rss_mib(worker.pid)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    if outcome.status != "completed":
        raise RuntimeError(f"the {tasks}-task run ended {outcome.status}")
    await asyncio.sleep(2)  # visibility is eventually consistent
    longest, carried = await _histories(client, queue, handle.id)
    return SizeResult(tasks, tasks / elapsed, longest, 1 + len(carried), carried, rss)


def _report(r: SizeResult) -> None:
    longest = ", ".join(f"{k} {v}" for k, v in sorted(r.longest.items()))
    carried = f"{max(r.carried_bytes)} B max" if r.carried_bytes else "none (no continue-as-new)"
    rate = f"{r.pairs_per_s:6.2f} pairs/s"
    print(f"{r.tasks:>6} tasks: {rate}; worker peak RSS {r.peak_rss_mib:.0f} MiB")
    print(f"        longest history: {longest}")
    print(f"        run continued as new {r.runs - 1} times; carried state {carried}")


async def main() -> None:
    """Run both sizes and print each, then the targets and the throughput ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=20)
    parser.add_argument("--pairs", choices=("auto", "full", "stand-in"), default="auto")
    add_tries(parser)
    args = parser.parse_args()
    pairs = args.pairs if args.pairs != "auto" else "full" if args.large <= 2000 else "stand-in"
    print(f"machine: {machine()}")
    what = (
        "full workflows (run -> pair -> 2 attempts)"
        if pairs == "full"
        else (
            "STAND-IN pairs (instant PairedTaskWorkflow, as test_history_bounds.py): "
            "only the run workflow is real"
        )
    )
    print(f"pairs: {what}; parallel {args.parallel}")
    results: list[SizeResult] = []
    guard = LoadGuard(tries=args.tries)
    async with dev_server() as client:
        for size in (args.small, args.large):
            run = functools.partial(run_size, client, size, args.parallel, pairs)
            results.append(await guard.round(f"{size} tasks", run))
            _report(results[-1])
    longest = max(max(r.longest.values()) for r in results)
    rss = max(r.peak_rss_mib for r in results)
    carried = max((b for r in results for b in r.carried_bytes), default=0)
    print(
        f"max history events of any workflow: {longest} (target < {HISTORY_WARNING}: "
        f"{'met' if longest < HISTORY_WARNING else 'NOT MET'})"
    )
    print(
        f"worker peak RSS: {rss:.0f} MiB (target < {RSS_LIMIT_MIB} MiB: "
        f"{'met' if rss < RSS_LIMIT_MIB else 'NOT MET'})"
    )
    print(f"carried-over state: {carried} B")
    ratio = results[1].pairs_per_s / results[0].pairs_per_s
    met = ratio >= THROUGHPUT_TARGET
    print(guard.ratio_line(f"scale pairs/s {args.large}/{args.small} tasks", ratio, ">= 0.8x", met))


if __name__ == "__main__":
    asyncio.run(main())
