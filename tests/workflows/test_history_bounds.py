"""A 2,000-task suite stays under Temporal's 10,240-event history warning in every workflow.

The run is the real ``SuiteRunWorkflow`` on a real dev server. Pairs are instant: a stand-in
registered as ``PairedTaskWorkflow`` that returns at once, both lanes completed. The pair and
attempt
workflows have histories whose length does not depend on the suite size (the recorded
histories and the continue-as-new test cover them); only the run's grows with the suite, and
that is what this test measures.

It runs across four continue-as-new segments (500 pairs each), which is what bounds the run's
history. ``DURABENCH_SCALE_TASKS`` changes the size; the 10,000-task proof is
``bench/scale.py`` (about seven minutes on 2 cores), not a CI test.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections import Counter
from pathlib import Path

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from activities.pair_ends import PairActivities
from durabench.models.pair import PairInput
from durabench.models.results import PairResult
from durabench.models.run import Approval, RunRequest
from durabench.models.suite_run import SuiteRunInput
from durabench.settings.values import Settings
from tests.workflows.fakes import Recorder, completed_pair
from workflows import SuiteRunWorkflow, run_workflow_id

HISTORY_WARNING = 10_240
"""Temporal's default per-workflow history event count warning."""

TASKS = int(os.environ.get("DURABENCH_SCALE_TASKS", "2000"))

_started: Counter[str] = Counter()
"""Pair workflow ids started, by first execution (replays of a cached stub do not count)."""


@workflow.defn(name="PairedTaskWorkflow", sandboxed=False)
class InstantPair:
    """Ends at once, both lanes completed."""

    @workflow.run
    async def run(self, pair: PairInput) -> PairResult:
        if not workflow.unsafe.is_replaying():
            _started[workflow.info().workflow_id] += 1
        return completed_pair(pair)


async def test_thousands_of_tasks_keep_every_history_under_the_warning(
    client: Client, tmp_path: Path
) -> None:
    queue = f"scale-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=[f"t{i:05d}" for i in range(TASKS)])
    pairs = PairActivities(client, Settings(home=tmp_path, task_queue=queue))
    request = RunRequest(run_id=f"r-{uuid.uuid4().hex[:8]}", suite="s", parallel=200)
    async with Worker(
        client,
        task_queue=queue,
        workflows=[SuiteRunWorkflow, InstantPair],
        activities=[
            *rec.activities(),
            PairActivities(client, Settings(home=tmp_path, task_queue=queue)).await_pairs,
        ],
        max_concurrent_workflow_tasks=50,
    ):
        handle = await client.start_workflow(
            SuiteRunWorkflow.run,
            SuiteRunInput(request=request),
            id=run_workflow_id(request.run_id),
            task_queue=queue,
        )
        while (await handle.query(SuiteRunWorkflow.progress)).phase != "awaiting_approval":
            await asyncio.sleep(0.2)
        await handle.signal(SuiteRunWorkflow.approve, Approval(approver="scale-test"))
        outcome = await handle.result()  # follows the run through continue-as-new
        progress = await client.get_workflow_handle_for(SuiteRunWorkflow.run, handle.id).query(
            SuiteRunWorkflow.progress
        )

    assert outcome.status == "completed"
    assert (progress.done, progress.total) == (TASKS, TASKS)
    assert progress.by_class == {"completed": 2 * TASKS}
    prefix = f"run/{request.run_id}/task/"
    ours = {wf: n for wf, n in _started.items() if wf.startswith(prefix)}
    assert len(ours) == TASKS and set(ours.values()) == {1}, "every pair started exactly once"

    runs = [wf async for wf in client.list_workflows(f'WorkflowId = "{handle.id}"')]
    assert len(runs) >= TASKS // request.pairs_per_run, "the run continued as new"
    longest = 0
    for wf in runs:
        history = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        longest = max(longest, len(history.events))
    assert 0 < longest < HISTORY_WARNING
    query = f'WorkflowType = "PairedTaskWorkflow" AND TaskQueue = "{queue}"'
    pairs = [wf.history_length async for wf in client.list_workflows(query)]
    assert len(pairs) == TASKS
    assert 0 < max(pairs) < HISTORY_WARNING
