"""SandboxSlotsWorkflow: the one count of sandboxes held, across every run, worker and host.

With ``DURABENCH_SANDBOX_QUOTA`` set, ``claim_host`` takes a slot here with the ``take``
update before its host admits the attempt, and the removal of the attempt's sandbox gives
it back (``give_back``). A full deployment answers at once (not granted): the claim fails
retryable and is asked again, as a full host's is. A holder that ends without giving its
slot back (terminated, reset) is found every ``reap_every_sec`` and its slot reclaimed,
as the account pool reclaims leases. It continues as new before its history grows large,
carrying its state.

Id: ``<task queue>/sandboxes`` (:func:`slots_workflow_id`), on the shared task queue: one
count per deployment.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from durabench.models.sandbox_slots import (
        FULL,
        GIVE_BACK,
        HELD,
        SLOTS_WORKFLOW,
        TAKE,
        GiveBackSlot,
        SlotAnswer,
        SlotsState,
        TakeSlot,
        slots_workflow_id,
    )
    from durabench.sandbox.slots import SandboxSlots

from workflows.account_pool import vanished
from workflows.long_lived import history_long

__all__ = ["SandboxSlotsWorkflow", "slots_workflow_id"]


@workflow.defn(name=SLOTS_WORKFLOW)
class SandboxSlotsWorkflow:
    """Sandbox slots of the deployment; runs until terminated."""

    @workflow.init
    def __init__(self, state: SlotsState) -> None:
        # Here, not in run: an update may arrive in the same task as the start.
        self.slots = SandboxSlots(state)
        self.updates = 0

    @workflow.run
    async def run(self, state: SlotsState) -> None:
        """Reclaim slots of vanished holders now and then; continue as new when long."""
        while not self._history_long():
            try:
                await workflow.wait_condition(
                    self._history_long,
                    timeout=timedelta(seconds=state.reap_every_sec),
                    timeout_summary="check slot holders",
                )
            except TimeoutError:
                pass
            if self.slots.held:
                await self._reap()
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(self.slots.state)

    def _history_long(self) -> bool:
        state = self.slots.state
        return history_long(self.updates, state.max_updates, state.max_history_events)

    async def _reap(self) -> None:
        holders = self.slots.holders_to_check()
        gone = await vanished(holders, f"check {len(holders)} sandbox slot holders")
        for holder in self.slots.expire((g[0], g[1]) for g in gone):
            workflow.logger.warning(
                "sandbox slot of %s reclaimed: its attempt ended without giving it back",
                holder.key,
            )

    @workflow.query(name=HELD)
    def held(self) -> SlotsState:
        """Who holds a slot now."""
        return self.slots.state

    @workflow.update(name=TAKE)
    def take(self, req: TakeSlot) -> SlotAnswer:
        """A slot for the attempt, or not granted when the deployment holds its quota.

        It answers at once: an update that waited would hold one of the few updates a
        workflow may have in flight, and give-backs must always get through.
        """
        self.updates += 1
        return self.slots.take(req)

    @take.validator
    def _room(self, req: TakeSlot) -> None:
        # A full deployment refuses here: a rejected update writes no history, and the
        # attempts past the quota ask again every few seconds until a slot frees.
        if not self.slots.has_room(req):
            raise ApplicationError(
                f"{self.slots.held} of {req.limit} sandbox slots held",
                self.slots.held,
                type=FULL,
                non_retryable=True,
            )

    @workflow.update(name=GIVE_BACK)
    def give_back(self, req: GiveBackSlot) -> None:
        """The attempt's sandbox is gone: its slot is free (if this host held it)."""
        self.updates += 1
        self.slots.give_back(req)
