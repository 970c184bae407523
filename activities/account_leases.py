"""Account activities: talk to the pool workflow for workflows (which cannot send updates).

A pair leases and releases through these; the pool reaps through ``vanished_holders``.
Each is quick and safe to retry: a retried lease may leave an unused lease behind, which
the pool reclaims when its holder ends.
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from activities.boundary import KnownSecrets, scrubbed
from activities.heartbeat import heartbeating
from durabench.accounts import Pool, load_accounts, pool_accounts
from durabench.accounts.pool_wire import (
    LEASE,
    POOL_WORKFLOW,
    RELEASE,
    SET_ACCOUNTS,
    SNAPSHOT,
    pool_workflow_id,
)
from durabench.errors import AccountError
from durabench.gateway import read_rooms
from durabench.models.accounts import (
    AccountHealth,
    AwaitLeaseInput,
    LeaseGrant,
    LeaseRequest,
    PoolAccounts,
    PoolState,
    ReleaseRequest,
    VanishedInput,
)
from durabench.models.room import RoomReading
from durabench.settings.values import Settings

__all__ = [
    "AccountActivities",
    "PoolHandle",
    "PoolUnanswered",
    "account_health",
    "pool_snapshot",
    "sync_pool",
]

ROOMS_CARRIED = 32
"""Readings of the host's gateway a lease or release carries to the pool at most."""
_ANSWER_S = 10.0
"""How long a pool update or query may wait for a worker to answer."""


class PoolHandle:
    """The pool workflow, addressed by its names on the wire, its messages typed.

    The workflow sits a layer up (it calls ``vanished_holders``), so this layer cannot
    use its methods as a typed handle; these do the same for the calls made here.
    """

    def __init__(self, handle: WorkflowHandle[Any, Any]) -> None:
        self.handle = handle

    @classmethod
    async def start(cls, client: Client, task_queue: str, state: PoolState) -> PoolHandle:
        """The deployment's pool, started with ``state`` unless it runs already."""
        handle = await client.start_workflow(
            POOL_WORKFLOW,
            state,
            id=pool_workflow_id(task_queue),
            task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary="agent account leases",
        )
        return cls(handle)

    async def set_accounts(self, accounts: PoolAccounts) -> PoolState:
        """The ``set_accounts`` update: the synced accounts in, the pool's state out."""
        state: PoolState = await self.handle.execute_update(
            SET_ACCOUNTS, accounts, result_type=PoolState
        )
        return state

    async def lease(self, req: LeaseRequest) -> LeaseGrant:
        """The ``lease`` update: a slot, or why none."""
        grant: LeaseGrant = await self.handle.execute_update(LEASE, req, result_type=LeaseGrant)
        return grant

    async def release(self, req: ReleaseRequest) -> None:
        """The ``release`` update: the lease ends."""
        await self.handle.execute_update(RELEASE, req)

    async def snapshot(self) -> PoolState:
        """The ``snapshot`` query: the pool's state."""
        state: PoolState = await self.handle.query(SNAPSHOT, result_type=PoolState)
        return state


async def sync_pool(
    client: Client, settings: Settings, check_secrets: bool = True
) -> PoolState | None:
    """Start the pool if it is not running and give it the accounts file's accounts.

    With ``check_secrets`` (on a worker: a run's plan), an account whose secret is
    missing here is synced blocked; a CLI elsewhere syncs without that check.
    Returns the pool's state, or ``None`` when there is no accounts file.

    Raises:
        AccountError: the file is invalid.
        PoolUnanswered: no worker answered the pool's update in time.
    """
    accounts = load_accounts(settings.accounts_file)
    if accounts is None:
        return None
    synced = PoolAccounts(
        accounts=pool_accounts(accounts, check=check_secrets), checked=check_secrets
    )
    pool = await PoolHandle.start(client, settings.task_queue, PoolState(accounts=synced.accounts))
    try:
        update = pool.set_accounts(synced)
        return await asyncio.wait_for(update, timeout=_ANSWER_S)
    except TimeoutError:
        raise PoolUnanswered(
            f"the account pool did not answer in {_ANSWER_S:.0f} s: is a worker running "
            "(`python worker.py`)?"
        ) from None


class PoolUnanswered(Exception):
    """No worker answered the pool in time (retried in an activity)."""


async def pool_snapshot(client: Client, settings: Settings) -> PoolState | None:
    """The pool's state, or ``None`` when it is not running or no worker answers."""
    pool = PoolHandle(client.get_workflow_handle(pool_workflow_id(settings.task_queue)))
    try:
        query = pool.snapshot()
        return await asyncio.wait_for(query, timeout=_ANSWER_S)
    except (RPCError, WorkflowQueryFailedError, TimeoutError):
        return None


def account_health(state: PoolState) -> tuple[AccountHealth, ...]:
    """Every account's health now."""
    return Pool(state).health(datetime.fromtimestamp(time.time(), tz=UTC))


_UNANSWERED = frozenset({"AcceptedUpdateCompletedWorkflow", "UnprocessedUpdate"})
"""Failures of an update the pool's run ended without answering (it continued as new
with the update accepted, or before its worker took it up): asking again is safe."""
_NOT_RUNNING = "the account pool is not running; `python -m starter accounts sync` starts it"


class AccountActivities:
    """Built in ``worker.py`` with the worker's client and settings."""

    def __init__(self, client: Client, settings: Settings) -> None:
        self.client = client
        self.pool = PoolHandle(client.get_workflow_handle(pool_workflow_id(settings.task_queue)))
        self.secrets = KnownSecrets(settings.accounts_file)
        self.gateway_root = settings.home / "gateway"

    @activity.defn(name="lease_account")
    @scrubbed
    async def lease_account(self, req: LeaseRequest) -> LeaseGrant:
        """Ask the pool for a slot.

        Raises:
            AccountError: the pool has no account for the agent (not retried).
            ApplicationError: the pool is not running (retried: a sync starts it).
        """
        try:
            rooms = await self._rooms(req.model) if req.model else ()
            return await self.pool.lease(req.model_copy(update={"rooms": rooms}))
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type in _UNANSWERED:
                unanswered = f"the pool did not answer ({cause.type}): ask again"
                raise ApplicationError(unanswered) from None
            raise AccountError(str(cause)) from None
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                raise ApplicationError(_NOT_RUNNING, type="PoolNotRunning") from None
            raise

    @activity.defn(name="await_lease")
    @scrubbed
    async def await_lease(self, data: AwaitLeaseInput) -> LeaseGrant:
        """Ask the pool until a slot is free, it answers other than busy, or time is up.

        The asks and waits happen here, heartbeating, so a long wait for a slot adds a
        few events to the pair's history instead of a dozen for every ask.
        """
        deadline = time.monotonic() + data.max_wait_sec
        wait = data.poll_sec
        while True:
            grant = await self.lease_account(data.request)
            if grant.lease is not None or not grant.busy or time.monotonic() >= deadline:
                return grant
            pause = min(wait, data.max_poll_sec) * random.uniform(0.5, 1.5)  # noqa: S311
            async with heartbeating(f"{grant.why[:200]}: asking again in {pause:.0f} s"):
                await asyncio.sleep(min(pause, max(deadline - time.monotonic(), 0.0)))
            wait = data.poll_sec if grant.room else wait * 2  # room comes back by itself

    @activity.defn(name="release_account")
    @scrubbed
    async def release_account(self, req: ReleaseRequest) -> None:
        """Give a slot back; a pool that is gone has nothing left to release."""
        try:
            await self.pool.release(req.model_copy(update={"rooms": await self._rooms()}))
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            activity.logger.warning("%s: lease %s not released", _NOT_RUNNING, req.lease_id)

    async def _rooms(self, model: str | None = None) -> tuple[RoomReading, ...]:
        """What this host's gateway last read of the accounts' rate limits, newest first.

        Of ``model`` only, when given; at most :data:`ROOMS_CARRIED`, as every reading
        carried is kept in the pool's history.
        """
        now = datetime.fromtimestamp(time.time(), tz=UTC)
        readings = await asyncio.to_thread(read_rooms, self.gateway_root, now)
        mine = [r for r in readings if model is None or r.model == model]
        return tuple(sorted(mine, key=lambda r: r.observed_at, reverse=True)[:ROOMS_CARRIED])

    @activity.defn(name="vanished_holders")
    @scrubbed
    async def vanished_holders(self, data: VanishedInput) -> list[tuple[str, str]]:
        """The holders whose workflow run is no longer running (or never existed)."""
        vanished = []
        for workflow_id, run_id in data.holders:
            handle = self.client.get_workflow_handle(workflow_id, run_id=run_id)
            try:
                desc = await handle.describe()
            except RPCError as exc:  # gone, or a run id that cannot exist
                if exc.status not in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
                    raise
                vanished.append((workflow_id, run_id))
                continue
            if desc.status != WorkflowExecutionStatus.RUNNING:
                vanished.append((workflow_id, run_id))
        return vanished
