"""A derived number of parallel slots drives the run's window, and set-parallel still steers it."""

from __future__ import annotations

import asyncio

from durabench.models.parallelism import ParallelBound, Parallelism
from starter.approve import approve_main
from starter.control import set_parallel_main
from tests.workflows.harness import Env, RunHandle, start_run, until
from workflows import SuiteRunWorkflow

DERIVED = Parallelism(
    parallel=3,
    bounds=(ParallelBound(source="sandboxes", pairs=3, detail="host h admits 6"),),
    bound_by="sandboxes",
    derived=3,
)


async def test_the_derived_number_fills_the_window_and_set_parallel_changes_it(env: Env) -> None:
    env.rec.agent_gate = asyncio.Event()
    env.rec.parallelism = DERIVED
    request, handle = await start_run(env, parallel=None)
    assert (await handle.query(SuiteRunWorkflow.progress)).parallel == 3
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: env.rec.in_agent == 6, "three pairs' agents run")
    assert await set_parallel_main(request.run_id, 4, client=env.client) == 3
    await until(lambda: env.rec.in_agent == 8, "four pairs' agents run")
    env.rec.agent_gate.set()
    assert (await handle.result()).status == "completed"


async def test_set_parallel_while_planning_stands_over_the_derived_number(env: Env) -> None:
    env.rec.plan_gate = asyncio.Event()
    env.rec.parallelism = DERIVED
    request, handle = await start_run(env, parallel=None, wait=False)
    await until(lambda: "plan_run" in env.rec.calls, "planning started")
    assert await set_parallel_main(request.run_id, 1, client=env.client) == 0
    env.rec.plan_gate.set()
    await until(lambda: _phase(handle, "awaiting_approval"), "the plan is made", tries=300)
    assert (await handle.query(SuiteRunWorkflow.progress)).parallel == 1


async def _phase(handle: RunHandle, phase: str) -> bool:
    return (await handle.query(SuiteRunWorkflow.progress)).phase == phase
