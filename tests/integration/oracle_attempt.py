"""An oracle attempt of the bundled suite's first task, its phases run as the worker runs them.

The activities run in process against real Docker (``ActivityEnvironment``), so a test can
watch what each phase asks of the daemon.
"""

from __future__ import annotations

import uuid
from typing import Any

from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.models.agent import AgentSpec
from durabench.models.attempt import (
    AgentRunOutput,
    AttemptRef,
    ClassifyAttemptInput,
    FinishInput,
    FinishOutput,
    VerifyOutput,
)
from durabench.models.run import TaskRef
from durabench.tasks import BUILTIN_SUITES_DIR

TASK = "tensor-gelu-001"


def oracle_ref(prefix: str, options: dict[str, Any] | None = None) -> AttemptRef:
    """A fresh run's first attempt of :data:`TASK`, baseline lane, by the oracle."""
    return AttemptRef(
        run_id=f"{prefix}-{uuid.uuid4().hex[:6]}",
        task=TaskRef(task_id=TASK, task_dir=str(BUILTIN_SUITES_DIR / "pytorch" / TASK)),
        lane="baseline",
        agent=AgentSpec(name="oracle", options=options or {}),
    )


async def run_phases(
    acts: SandboxActivities, ref: AttemptRef
) -> tuple[AgentRunOutput, VerifyOutput, FinishOutput]:
    """Provision, run the agent, verify, finish (collect, classify, remove)."""
    env = ActivityEnvironment()
    await env.run(acts.provision_sandbox, ref)
    agent = await env.run(acts.run_agent, ref)
    verified = await env.run(acts.verify, ref)
    ran = agent.model_dump(include={"exit_code", "timed_out", "wall_seconds", "files_changed"})
    facts = ClassifyAttemptInput(ref=ref, build_failed=verified.build_failed, **ran)
    out = await env.run(acts.finish_sandbox, FinishInput(ref=ref, classify=facts))
    return agent, verified, out
