"""The deployment's sandbox slots: a quota held across claims, ended holders' slots reclaimed.

Claims go through :class:`activities.sandbox_slots.DeploymentSlots` as ``claim_host``
sends them (in an activity's context), to the slots workflow on a real dev server.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import ActivityEnvironment
from temporalio.worker import Worker

from activities import AccountActivities
from activities.sandbox_slots import DeploymentSlots
from durabench.models.sandbox_slots import SlotsState, slots_workflow_id
from durabench.settings.values import Settings
from tests.workflows.harness import until
from workflows import WORKFLOWS, SandboxSlotsWorkflow


async def test_the_quota_holds_across_claims_and_an_ended_holder_s_slot_is_reclaimed(
    client: Client, tmp_path: Path
) -> None:
    """Quota 2: a third attempt is refused until one gives back or its holder is gone."""
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    settings = Settings(home=tmp_path, task_queue=queue, sandbox_quota=2)
    accounts = AccountActivities(client, settings)
    slots, env = DeploymentSlots(client, settings), ActivityEnvironment()
    async with Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        activities=[accounts.vanished_holders],
    ):
        handle = await client.start_workflow(
            SandboxSlotsWorkflow.run,
            SlotsState(reap_every_sec=1),
            id=slots_workflow_id(queue),
            task_queue=queue,
        )
        first = await env.run(slots.take, "run/t1/baseline/1", "host-a")
        second = await env.run(slots.take, "run/t2/baseline/1", "host-b")
        third = await env.run(slots.take, "run/t3/baseline/1", "host-a")
        again = await env.run(slots.take, "run/t1/baseline/1", "host-b")  # moved to b
        assert [a.granted if a else None for a in (first, second, third, again)] == [
            True,
            True,
            False,
            True,
        ]
        await env.run(slots.give_back, "run/t1/baseline/1", "host-a")  # the lost host's
        assert not (await env.run(slots.take, "run/t3/baseline/1", "host-a")).granted  # type: ignore[union-attr]
        await env.run(slots.give_back, "run/t1/baseline/1", "host-b")
        assert (await env.run(slots.take, "run/t3/baseline/1", "host-a")).granted  # type: ignore[union-attr]

        # A refused take is rejected by the validator: it leaves no event. Accepted: the
        # four takes granted and the two give-backs.
        accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
        events = [e.event_type async for e in handle.fetch_history_events()]
        assert events.count(accepted) == 6

        # Every holder here is the ActivityEnvironment's made-up workflow, which never ran:
        # the reaper finds it gone and frees every slot.
        async def emptied() -> bool:
            return not (await handle.query(SandboxSlotsWorkflow.held)).holders

        await until(emptied, "the slots of holders that never ran are reclaimed", tries=200)
        record = os.environ.get("DURABENCH_RECORD_HISTORIES")  # how tests/histories got it
        if record:
            text = (await handle.fetch_history()).to_json()
            Path(record, "sandbox_slots.json").write_text(text)
        await handle.terminate("test over")


async def test_no_quota_means_no_slots_workflow(client: Client, tmp_path: Path) -> None:
    """Without DURABENCH_SANDBOX_QUOTA a claim asks nothing of the server."""
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    slots = DeploymentSlots(client, Settings(home=tmp_path, task_queue=queue))
    assert await ActivityEnvironment().run(slots.take, "run/t1/baseline/1", "host-a") is None
    await ActivityEnvironment().run(slots.give_back, "run/t1/baseline/1", "host-a")
