"""The verify activity takes one of its host's verifier slots (real Docker).

Verifiers are CPU-bound: a host admitting many sandboxes (by memory) runs at most
``max_verifiers`` of them at once; the rest wait, as long as their phase can spare.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import TaskRef
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR
from tests.workflows.harness import until

pytestmark = pytest.mark.docker

TASK = "tensor-gelu-001"


async def test_a_verify_waits_for_a_slot_and_then_verifies(settings: Settings) -> None:
    task = TaskRef(task_id=TASK, task_dir=str(BUILTIN_SUITES_DIR / "pytorch" / TASK))
    ref = AttemptRef(
        run_id=f"slots-{uuid.uuid4().hex[:6]}",
        task=task,
        lane="baseline",
        agent=AgentSpec(name="nop", model="m"),
    )
    acts = SandboxActivities(settings.model_copy(update={"max_verifiers": 1}), "q", "test")
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info,
        started_time=datetime.fromtimestamp(time.time(), tz=UTC),
        start_to_close_timeout=timedelta(seconds=ref.task.verifier_timeout_sec + 600),
    )
    try:
        await env.run(acts.provision_sandbox, ref)
        async with acts.verify_slots.slot(wait_at_most=0):  # another verifier holds the slot
            verify = asyncio.create_task(env.run(acts.verify, ref))
            await until(lambda: acts.verify_slots.waiting == 1, "verify waits for the slot")
            assert not verify.done()
        out = await verify  # the slot is free: it verifies
        assert out.reward is not None or out.build_failed
        assert (acts.verify_slots.running, acts.verify_slots.waiting) == (0, 0)
    finally:
        await acts.teardown_sandbox(ref)
