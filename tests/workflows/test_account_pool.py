"""The account pool: cooldowns honoured, reroutes, expired leases, limits across runs.

These run on the session's dev server in real time (cooldowns of seconds): the
time-skipping test server loses updates sent while it skips time ("update not found").
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio import activity
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities import AccountActivities
from durabench.accounts import Pool
from durabench.models.accounts import (
    LeaseGrant,
    LeaseRequest,
    PoolAccount,
    PoolState,
    ReleaseRequest,
)
from durabench.models.agent import AgentSpec
from durabench.models.pair import PairInput
from durabench.models.run import TaskRef
from durabench.settings.values import Settings
from tests.workflows.fakes import Recorder
from tests.workflows.harness import until
from workflows import (
    WORKFLOWS,
    AccountPoolWorkflow,
    PairedTaskWorkflow,
    pair_workflow_id,
    pool_workflow_id,
)

PoolHandle = WorkflowHandle[AccountPoolWorkflow, None]


def _account(id: str, slots: int = 1, agent: str = "claude-code") -> PoolAccount:
    return PoolAccount(id=id, agent=agent, slots=slots)


def _pair_on_accounts(run_id: str, infra_retries: int) -> PairInput:
    """Task ``t1``, the baseline lane only, leasing accounts of ``claude-code``."""
    return PairInput(
        run_id=run_id,
        task=TaskRef(task_id="t1", task_dir="/nowhere"),
        lanes=("baseline",),
        agent=AgentSpec(name="claude-code", model="m"),
        infra_retries=infra_retries,
        infra_backoff_sec=1,
        accounts=True,
    )


async def _start_pool(client: Client, queue: str, state: PoolState) -> PoolHandle:
    return await client.start_workflow(
        AccountPoolWorkflow.run, state, id=pool_workflow_id(queue), task_queue=queue
    )


def _worker(client: Client, queue: str, rec: Recorder, tmp_path: Path) -> Worker:
    accounts = AccountActivities(client, Settings(home=tmp_path, task_queue=queue))
    return Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        activities=[
            *rec.activities(),
            accounts.lease_account,
            accounts.await_lease,
            accounts.release_account,
            accounts.vanished_holders,
        ],
    )


async def test_a_capped_account_cools_the_retry_goes_elsewhere_and_all_cooling_waits(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=["t1"])
    rec.classes["t1/baseline"] = ["infra_usage_cap", "infra_usage_cap", "completed"]
    rec.cap_resets_at = datetime.fromtimestamp(time.time() + 10, tz=UTC)
    async with _worker(client, queue, rec, tmp_path):
        pool = await _start_pool(client, queue, PoolState(accounts=(_account("a"), _account("b"))))
        run_id = f"r-{uuid.uuid4().hex[:8]}"
        pair = _pair_on_accounts(run_id, infra_retries=3)
        result = await client.execute_workflow(
            PairedTaskWorkflow.run, pair, id=pair_workflow_id(run_id, "t1"), task_queue=queue
        )
        state = await pool.query(AccountPoolWorkflow.snapshot)
        pair_handle = client.get_workflow_handle(pair_workflow_id(run_id, "t1"))
        history = [e async for e in pair_handle.fetch_history_events()]
        record = os.environ.get("DURABENCH_RECORD_HISTORIES")  # how tests/histories got it
        if record:
            for name, handle in (("paired_task_accounts", pair_handle), ("account_pool", pool)):
                text = (await handle.fetch_history()).to_json()
                Path(record, f"{name}.json").write_text(text)
    first, second, third = (a.account for a in result.attempts)
    assert first != second and {first, second} == {"a", "b"}  # rerouted after the cap
    assert [a.exit_class for a in result.attempts][-1] == "completed" and not result.excluded
    assert third in ("a", "b")
    # the third attempt waited, on a durable timer, for the cap to reset: not one burnt
    timers = [e for e in history if e.HasField("timer_started_event_attributes")]
    assert any("wait for an account" in e.user_metadata.summary.data.decode() for e in timers)
    started = result.attempts[2].timings[0].started_at
    assert started >= rec.cap_resets_at
    assert state.leases == ()  # every lease given back
    assert {c.account_id for c in state.cooldowns} == {"a", "b"}


async def test_a_rate_limited_account_cools_until_the_time_the_api_named(
    client: Client, tmp_path: Path
) -> None:
    """The retry on the only account waits for the API's reset, not a burnt attempt."""
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=["t1"])
    rec.classes["t1/baseline"] = ["infra_rate_limit", "completed"]
    rec.rate_limit_resets_at = datetime.fromtimestamp(time.time() + 8, tz=UTC)
    async with _worker(client, queue, rec, tmp_path):
        pool = await _start_pool(client, queue, PoolState(accounts=(_account("a"),)))
        run_id = f"r-{uuid.uuid4().hex[:8]}"
        result = await client.execute_workflow(
            PairedTaskWorkflow.run,
            _pair_on_accounts(run_id, infra_retries=1),
            id=pair_workflow_id(run_id, "t1"),
            task_queue=queue,
        )
        state = await pool.query(AccountPoolWorkflow.snapshot)
    assert [a.exit_class for a in result.attempts] == ["infra_rate_limit", "completed"]
    assert result.attempts[1].timings[0].started_at >= rec.rate_limit_resets_at
    assert [c.account_id for c in state.cooldowns] == ["a"]


async def test_a_lease_whose_holder_vanished_is_reclaimed_and_state_survives_continue_as_new(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=[])
    state = PoolState(accounts=(_account("a"),), reap_every_sec=0.5, max_history_events=100)
    gone = LeaseRequest(
        agent="claude-code",
        holder_workflow_id="gone",
        holder_run_id=str(uuid.uuid4()),
        label="gone",
    )
    async with _worker(client, queue, rec, tmp_path):
        pool = await _start_pool(client, queue, state)
        first_run = (await pool.describe()).run_id
        held = await pool.execute_update(AccountPoolWorkflow.lease, gone)
        assert held.lease is not None
        await until(
            lambda: _no_leases(pool), "the pool reclaimed the lease of a holder that is gone"
        )
        # enough updates to pass the history limit: the pool continues as new
        for _ in range(30):
            grant = await pool.execute_update(AccountPoolWorkflow.lease, gone)
            assert grant.lease is not None
            release = ReleaseRequest(lease_id=grant.lease.lease_id)
            await pool.execute_update(AccountPoolWorkflow.release, release)
        # a lease whose holder runs is kept, across continue-as-new (any running workflow
        # will do as its holder: another pool's)
        holder = await client.start_workflow(
            AccountPoolWorkflow.run, PoolState(), id=f"{queue}/holder", task_queue=queue
        )
        alive = gone.model_copy(
            update={
                "holder_workflow_id": holder.id,
                "holder_run_id": (await holder.describe()).run_id,
                "label": "alive",
            }
        )
        assert (await pool.describe()).run_id != first_run  # it continued as new
        kept = await pool.execute_update(AccountPoolWorkflow.lease, alive)
        granted_in = (await pool.describe()).run_id
        await until(lambda: _continued(pool, granted_in), "the pool continued as new again")
        latest = client.get_workflow_handle_for(AccountPoolWorkflow.run, pool.id)
        snapshot = await latest.query(AccountPoolWorkflow.snapshot)
        await holder.terminate("test over")
    assert kept.lease is not None and snapshot.leases == (kept.lease,)


async def _continued(pool: PoolHandle, first_run: str) -> bool:
    """Whether the pool runs a later run than ``first_run`` (it continued as new)."""
    return (await pool.describe()).run_id != first_run


async def _no_leases(pool: PoolHandle) -> bool:
    return (await pool.query(AccountPoolWorkflow.snapshot)).leases == ()


async def test_an_agent_with_no_account_is_refused_with_the_fix(
    client: Client, tmp_path: Path
) -> None:
    queue = f"wf-{uuid.uuid4().hex[:8]}"
    rec = Recorder(queue=queue, task_ids=[])
    async with _worker(client, queue, rec, tmp_path):
        pool = await _start_pool(client, queue, PoolState(accounts=(_account("a"),)))
        req = LeaseRequest(agent="codex-cli", holder_workflow_id="h", holder_run_id="x", label="")
        with pytest.raises(WorkflowUpdateFailedError) as err:
            await pool.execute_update(AccountPoolWorkflow.lease, req)
    assert "no account for agent 'codex-cli'" in str(err.value.cause)
    assert "accounts sync" in str(err.value.cause)


async def test_a_cooldown_of_hours_is_waited_out_on_the_time_skipping_server(
    skipping: WorkflowEnvironment,
) -> None:
    """The pair waits for a cap that resets in 5 hours on a durable timer, skipped here.

    The pool's rules run in the lease activities (the test server loses updates sent
    while it skips time, so the pool workflow is not used here).
    """
    client, queue = skipping.client, f"ts-{uuid.uuid4().hex[:8]}"
    pool = Pool(PoolState(accounts=(_account("a"),)))
    rec = Recorder(queue=queue, task_ids=["t1"])
    rec.classes["t1/baseline"] = ["infra_usage_cap", "completed"]
    start = await skipping.get_current_time()
    rec.cap_resets_at = start + timedelta(hours=5)
    asked: list[datetime] = []

    @activity.defn(name="lease_account")
    async def lease_account(req: LeaseRequest) -> LeaseGrant:
        now = activity.info().current_attempt_scheduled_time
        asked.append(now)
        return pool.grant(req, req.lease_id, now)

    @activity.defn(name="release_account")
    async def release_account(req: ReleaseRequest) -> None:
        pool.release(req, activity.info().current_attempt_scheduled_time)

    async with Worker(
        client,
        task_queue=queue,
        workflows=list(WORKFLOWS),
        activities=[*rec.activities(), lease_account, release_account],
    ):
        pair = _pair_on_accounts("r", infra_retries=1)
        result = await client.execute_workflow(
            PairedTaskWorkflow.run, pair, id=pair_workflow_id("r", "t1"), task_queue=queue
        )
    assert [a.exit_class for a in result.attempts] == ["infra_usage_cap", "completed"]
    assert result.attempts[1].timings[0].started_at >= rec.cap_resets_at
    # asked once for attempt 1, then every COOLING_POLL (15 min) at most while it cooled
    assert 2 < len(asked) <= 2 + 5 * 4 + 1
    assert pool.leases == ()
