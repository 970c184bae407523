"""An agent phase renews its gateway grant while it runs: a dead worker's sessions stop paying.

A worker killed on a live host leaves its containers running and its gateway serving (a
process of its own). Its attempts start over on another host once the host's queue has
had no worker for the host timeout; the sessions left behind would go on calling the
model, paid, until a sweep. The grant's lease (the host timeout and a minute) runs out
about when the attempt moves, unless a live agent phase renews it: a worker that comes
back in time re-attaches and grants afresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from activities.heartbeat import periodically
from durabench.gateway import GrantStore
from durabench.models.attempt import AttemptRef
from durabench.models.config import ModelApi
from durabench.spend import SpendTerms

__all__ = ["RENEW_EVERY_S", "renewing", "spend_terms"]

RENEW_EVERY_S = 10.0
"""How often a running agent phase renews its grant (leases last minutes)."""


@asynccontextmanager
async def renewing(
    store: GrantStore, attempt: str, every_s: float = RENEW_EVERY_S
) -> AsyncIterator[None]:
    """Renew ``attempt``'s grant every ``every_s`` seconds until the block ends."""

    async def renew() -> None:
        await asyncio.to_thread(store.renew, attempt)

    async with periodically(renew, every_s):
        yield


def spend_terms(ref: AttemptRef, provider: ModelApi | None) -> SpendTerms | None:
    """What the gateway charges a capped run's attempt with: its run, pair and price.

    The price is the model's in the run's prices (its plan's); every request of the
    attempt is priced at it, its CLI's auxiliary models too (they cost less: the cap is
    kept on the safe side). ``None``: the run has no cap.
    """
    if not ref.spend_capped:
        return None
    price = ref.prices.price(provider, ref.agent.model) if provider else None
    return SpendTerms(run_id=ref.run_id, task_id=ref.task.task_id, rates=price)
