"""The parallel slots of a plan, derived where nobody said ``--parallel``, as a person sees them.

A worker of the test plans for real (the real plan and account activities, the account
pool, the server's list of pollers); ``starter status`` shows the plan in a subprocess,
``plan.json`` keeps the same derivation, and ``starter set-parallel`` still changes it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from activities import AccountActivities, PlanActivities
from durabench.lock_file import lock_digest
from durabench.models.agent import AgentSpec
from durabench.models.run import RunPlan, RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from starter.run import main as run_main
from tests.starter_cli import starter_async
from tests.workflows.harness import until
from workflows import (
    WORKFLOWS,
    AccountPoolWorkflow,
    SuiteRunWorkflow,
    pool_workflow_id,
    run_workflow_id,
)

ACCOUNTS_TOML = """
[[account]]
id = "a"
agent = "claude-code"
secret_env = "PARALLEL_TEST_A_KEY"
slots = 5

[[account]]
id = "b"
agent = "claude-code"
secret_env = "PARALLEL_TEST_B_KEY_UNSET"
slots = 8
"""


@pytest.fixture
async def planner(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Settings]:
    """A worker of this host, admitting 8 sandboxes, with one usable account of 5 slots."""
    settings = settings.model_copy(update={"max_sandboxes": 8, "host_id_override": "host-p"})
    settings.accounts_file.parent.mkdir(parents=True, exist_ok=True)
    settings.accounts_file.write_text(ACCOUNTS_TOML)
    monkeypatch.setenv("PARALLEL_TEST_A_KEY", "a-secret-0123456789")
    plan, accounts = PlanActivities(settings, client), AccountActivities(client, settings)
    activities = [plan.plan_run, plan.plan_page, plan.record_run, accounts.lease_account]
    async with Worker(
        client,
        task_queue=settings.task_queue,
        identity=f"test@{settings.host_id}",
        workflows=list(WORKFLOWS),
        activities=activities,
    ):
        try:
            yield settings
        finally:
            pool = pool_workflow_id(settings.task_queue)
            await client.get_workflow_handle_for(AccountPoolWorkflow.run, pool).terminate()


def _plan_rows(out: str) -> dict[str, str]:
    """The plan table's rows, key to value; a cell wrapped over lines is joined again."""
    rows: dict[str, str] = {}
    key = ""
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) != 4:  # not a row of the table: │ key │ value │
            continue
        key = cells[1] or key
        rows[key] = f"{rows[key]} {cells[2]}" if key in rows else cells[2]
    return rows


async def _plan(client: Client, settings: Settings, parallel: int | None) -> RunPlan:
    request = RunRequest(
        run_id=f"r-{uuid.uuid4().hex[:6]}",
        suite="pytorch",
        agent=AgentSpec(name="claude-code", model="claude-haiku-4-5"),
        parallel=parallel,
    )
    await run_main(request, detach=True, client=client, settings=settings)
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(request.run_id))

    async def planned() -> bool:
        if (await handle.describe()).close_time is not None:
            await handle.result()  # raises: planning failed
        return await handle.query(SuiteRunWorkflow.plan) is not None

    await until(planned, f"run {request.run_id} made its plan")
    path = RunPaths.for_run(settings.runs_dir, request.run_id).plan
    return RunPlan.model_validate_json(path.read_text())


async def test_the_plan_shows_how_its_parallel_slots_were_derived(
    client: Client, planner: Settings
) -> None:
    plan = await _plan(client, planner, parallel=None)
    assert plan.worker_lock == lock_digest() != ""  # the planning worker's lock, recorded
    derivation = plan.parallelism
    assert derivation is not None
    # accounts: 5 slots of a (b is blocked: its secret is unset) over 2 lanes = 2 pairs;
    # sandboxes: host-p admits 8 = 4 pairs; rate limits of claude-haiku-4-5: 20 pairs.
    bounds = {b.source: b.pairs for b in derivation.bounds}
    assert bounds == {"accounts": 2, "sandboxes": 4, "rate limits": 20}
    assert (derivation.parallel, derivation.bound_by, derivation.overridden) == (
        2,
        "accounts",
        False,
    )
    run_id = plan.request.run_id
    proc = await starter_async(planner, "status", run_id)
    assert proc.returncode == 0, proc.stderr
    rows = _plan_rows(proc.stdout)
    assert rows["worker lock"].replace(" ", "") == plan.worker_lock
    assert rows["parallel slots"] == (
        "2 (derived: the least of the sources below, bound by accounts)"
    )
    assert rows["from accounts"] == (
        "2 pairs ← bound: 5 slots of 1 claude-code account(s), not b blocked, ÷ 2 lanes a pair"
    )
    assert rows["from sandboxes"].startswith(
        "4 pairs: 8 sandboxes: host host-p admits 8 (by memory, not CPUs: 1024 MiB a sandbox "
        "until measured, agents that hold less fit more; DURABENCH_MAX_SANDBOXES caps it; "
        "agents mostly wait on the model, and verifiers, CPU-bound, run at most "
    )
    assert rows["from sandboxes"].endswith(
        " at once per host, DURABENCH_MAX_VERIFIERS), ÷ 2 lanes a pair"
    )
    assert rows["from rate limits"].startswith(
        "20 pairs: claude-haiku-4-5 (first guess: published limits): 4,000 requests/min "
        "÷ 10 = 400 sessions, 4,000,000 tokens/min ÷ 100,000 = 40, ÷ 2 lanes a pair (assumed: "
    )
    # set-parallel changes the derived number live, as it changes a given one.
    proc = await starter_async(planner, "set-parallel", run_id, "3")
    assert proc.returncode == 0, proc.stderr
    assert f"Run {run_id}: parallel slots 2 → 3." in proc.stdout
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    assert (await handle.query(SuiteRunWorkflow.progress)).parallel == 3


async def test_parallel_given_overrides_the_derivation_and_warns_past_a_bound(
    client: Client, planner: Settings
) -> None:
    plan = await _plan(client, planner, parallel=3)
    derivation = plan.parallelism
    assert derivation is not None
    assert (derivation.parallel, derivation.overridden, derivation.derived) == (3, True, 2)
    assert [w for w in plan.warnings if w.startswith("--parallel")] == [
        "--parallel 3 is more than the accounts allow (2 pairs: 5 slots of 1 claude-code "
        "account(s), not b blocked, ÷ 2 lanes a pair); arms past it wait for an account slot"
    ]
    proc = await starter_async(planner, "status", plan.request.run_id)
    assert _plan_rows(proc.stdout)["parallel slots"] == "3 (--parallel; derived: 2)"
