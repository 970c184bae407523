"""AccountPoolWorkflow: the one holder of account leases, across every run and worker.

An attempt's pair leases a slot with the ``lease`` update (through the ``lease_account``
activity) and releases it with ``release`` when the attempt ends, naming the time a usage
cap resets if it hit one. A holder that ends without releasing (terminated, reset) is
found every ``reap_every_sec`` by ``vanished_holders`` and its lease reclaimed. The pool
keeps no secret: accounts are ids, slots and expiry dates, synced from ``accounts.toml``
by ``starter run`` and ``starter accounts sync``. It continues as new before its history
grows large, or after ``max_updates`` updates (the server refuses more than 2,000 in one
workflow run, and not every server suggests continue-as-new before that), carrying its
state.

Id: ``<task queue>/accounts`` (:func:`pool_workflow_id`), on the shared task queue: one
pool per deployment.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.account_leases import AccountActivities
    from durabench.accounts import Pool
    from durabench.accounts.pool_wire import (
        LEASE,
        POOL_WORKFLOW,
        RELEASE,
        SET_ACCOUNTS,
        SNAPSHOT,
        pool_workflow_id,
    )
    from durabench.models.accounts import (
        LeaseGrant,
        LeaseRequest,
        PoolAccounts,
        PoolState,
        ReleaseRequest,
        VanishedInput,
    )

from workflows.long_lived import history_long
from workflows.policies import RETRY, SHORT

__all__ = ["AccountPoolWorkflow", "pool_workflow_id", "vanished"]


async def vanished(holders: tuple[tuple[str, str], ...], summary: str) -> list[tuple[str, str]]:
    """Which of ``(workflow id, run id)`` no longer run (run id ``""``: the latest run)."""
    return await workflow.execute_activity_method(
        AccountActivities.vanished_holders,
        VanishedInput(holders=holders),
        start_to_close_timeout=SHORT,
        retry_policy=RETRY,
        summary=summary,
    )


@workflow.defn(name=POOL_WORKFLOW)
class AccountPoolWorkflow:
    """Leases, cooldowns and health of every agent account; runs until terminated."""

    @workflow.init
    def __init__(self, state: PoolState) -> None:
        # Here, not in run: an update may arrive in the same task as the start.
        self.pool = Pool(state)
        self.updates = 0

    @workflow.run
    async def run(self, state: PoolState) -> None:
        """Reclaim leases of vanished holders now and then; continue as new when long."""
        while not self._history_long():
            try:
                await workflow.wait_condition(
                    self._history_long,
                    timeout=timedelta(seconds=state.reap_every_sec),
                    timeout_summary="check lease holders",
                )
            except TimeoutError:
                pass
            if self.pool.leases:
                await self._reap()
        await workflow.wait_condition(workflow.all_handlers_finished)
        self.pool.forget_cooldowns(workflow.now())
        workflow.continue_as_new(self.pool.state)

    def _history_long(self) -> bool:
        state = self.pool.state
        return history_long(self.updates, state.max_updates, state.max_history_events)

    async def _reap(self) -> None:
        holders = tuple(sorted({(x.holder_workflow_id, x.holder_run_id) for x in self.pool.leases}))
        gone = await vanished(holders, f"check {len(holders)} lease holders")
        for lease in self.pool.expire((v[0], v[1]) for v in gone):
            workflow.logger.warning(
                "lease of %s by %s expired: its holder ended without releasing it",
                lease.account_id,
                lease.label,
            )

    @workflow.query(name=SNAPSHOT)
    def snapshot(self) -> PoolState:
        """The pool's state: accounts, leases, cooldowns (health is computed from it)."""
        return self.pool.state

    @workflow.update(name=SET_ACCOUNTS)
    def set_accounts(self, accounts: PoolAccounts) -> PoolState:
        """Take the accounts as synced from ``accounts.toml``; leases are kept."""
        self.updates += 1
        self.pool.set_accounts(accounts.accounts, accounts.checked)
        return self.pool.state

    @workflow.update(name=LEASE)
    def lease(self, req: LeaseRequest) -> LeaseGrant:
        """A slot of a healthy account of the agent, or why none and when to ask again.

        It answers at once: an update that waited would hold one of the few updates a
        workflow may have in flight, and releases must always get through. A request
        with the ``lease_id`` of a lease held already gets that lease back.
        """
        self.updates += 1
        return self.pool.grant(req, req.lease_id or str(workflow.uuid4()), workflow.now())

    @lease.validator
    def _known_agent(self, req: LeaseRequest) -> None:
        if req.agent not in self.pool.agents():
            raise ValueError(
                f"no account for agent {req.agent!r} is synced; add one to accounts.toml "
                "and run `python -m starter accounts sync`"
            )

    @workflow.update(name=RELEASE)
    def release(self, req: ReleaseRequest) -> None:
        """End a lease; a usage cap puts its account in cooldown until the cap resets."""
        self.updates += 1
        lease = self.pool.release(req, workflow.now())
        if lease is not None and req.cool_until is not None:
            workflow.logger.warning(
                "account %s hit its usage cap; cooling until %s", lease.account_id, req.cool_until
            )
