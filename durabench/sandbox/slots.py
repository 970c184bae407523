"""The deployment's sandbox slots: at most the quota held at once, whoever asks.

Pure and deterministic: the slots workflow (:mod:`workflows.sandbox_slots`) holds one
:class:`SandboxSlots` and answers its updates with it. A slot is keyed by attempt, so a
retried claim, or a claim after the attempt moved to another host, holds the one slot it
had; it then belongs to the new host, and the lost host's late removal of its old sandbox
does not give it back.
"""

from __future__ import annotations

from collections.abc import Iterable

from durabench.models.sandbox_slots import (
    GiveBackSlot,
    SlotAnswer,
    SlotHolder,
    SlotsState,
    TakeSlot,
)

__all__ = ["SandboxSlots"]


class SandboxSlots:
    """The slots held now; every method changes :attr:`state` in place."""

    def __init__(self, state: SlotsState) -> None:
        self.state = state

    @property
    def held(self) -> int:
        """Slots held now."""
        return len(self.state.holders)

    def has_room(self, req: TakeSlot) -> bool:
        """Whether ``req.holder`` holds a slot already or fewer than the limit are held."""
        holders = self.state.holders
        return req.holder.key in holders or len(holders) < req.limit

    def take(self, req: TakeSlot) -> SlotAnswer:
        """Grant ``req.holder`` a slot if :meth:`has_room`."""
        holders = self.state.holders
        key = req.holder.key
        granted, already = self.has_room(req), key in holders
        if granted:
            holders[key] = req.holder
        return SlotAnswer(granted=granted, held=len(holders), limit=req.limit, already=already)

    def give_back(self, req: GiveBackSlot) -> SlotHolder | None:
        """End the slot of ``req.key`` if ``req.host`` holds it; the slot ended, if any."""
        holder = self.state.holders.get(req.key)
        if holder is None or holder.host != req.host:
            return None
        return self.state.holders.pop(req.key)

    def holders_to_check(self) -> tuple[tuple[str, str], ...]:
        """``(workflow id, run id)`` of every holder, sorted, each once."""
        return tuple(sorted({(h.workflow_id, h.run_id) for h in self.state.holders.values()}))

    def expire(self, gone: Iterable[tuple[str, str]]) -> list[SlotHolder]:
        """End the slots of holders whose workflow run ended; those ended."""
        ended = set(gone)
        out = [h for h in self.state.holders.values() if (h.workflow_id, h.run_id) in ended]
        for holder in out:
            del self.state.holders[holder.key]
        return out
