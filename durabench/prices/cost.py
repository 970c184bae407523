"""What an attempt's metered tokens cost at a run's prices.

The gateway's ledger says how many tokens of each kind each provider's model used
(:class:`~durabench.models.verdict.MeteredUsage`); the prices the run recorded turn them
into USD. One model without a price makes the whole cost unknown: a sum that left it out
would read as a real, smaller cost.
"""

from __future__ import annotations

from typing import NamedTuple

from durabench.models.prices import PriceTable
from durabench.models.verdict import MeteredUsage

__all__ = [
    "CLI_COST_TOLERANCE",
    "MeteredCost",
    "attempt_cost",
    "cli_cost_note",
    "metered_cost",
    "unmetered_note",
]

CLI_COST_TOLERANCE = (0.01, 0.05)
"""A CLI's own cost that differs from the metered one by more than both this many USD
and this share of it is named: CLIs price with their own tables and round."""


class MeteredCost(NamedTuple):
    """The cost of metered tokens, or the model that left it unknown."""

    usd: float | None
    """USD; ``None`` when a model that used tokens has no price."""
    unpriced: str
    """That model's id; ``""`` when every model was priced."""


def metered_cost(metered: MeteredUsage | None, prices: PriceTable) -> MeteredCost:
    """The cost of ``metered``'s tokens at ``prices``; no traffic costs nothing."""
    usd = 0.0
    for used in metered.by_model if metered is not None else ():
        if used.tokens.total == 0:
            continue
        price = prices.price(used.provider, used.model)
        if price is None:
            return MeteredCost(None, used.model or f"a {used.provider} model it did not name")
        usd += price.cost_usd(used.tokens)
    return MeteredCost(usd, "")


def attempt_cost(metered: MeteredUsage | None, prices: PriceTable, model: str) -> MeteredCost:
    """The cost of record of an attempt whose model traffic the gateway carries.

    Its metered tokens at the run's ``prices``; when the run's ``model`` is unpriced the
    cost is unknown even with no tokens (an auxiliary model's price in the table does not
    make it known), so an unpriced run never shows $0 beside its priced attempts. The
    classifier and the audit both ask this.
    """
    cost = metered_cost(metered, prices)
    if cost.usd is not None and prices.priced(model) is None:
        return MeteredCost(None, model or "the run's model")
    return cost


def unmetered_note(metered: MeteredUsage | None) -> str:
    """``"; n answer(s) ... reported no usage"`` when some billed answers went uncounted."""
    if metered is None or not metered.unmetered:
        return ""
    return (
        f"; {metered.unmetered} answer(s) the API bills reported no usage: the cost counts "
        "only the tokens metered, and is that much short"
    )


def cli_cost_note(metered_usd: float | None, cli_usd: float | None) -> str:
    """``"; the CLI reports $x, ..."`` when the CLI's cost differs past the tolerance."""
    if metered_usd is None or cli_usd is None:
        return ""
    usd, share = CLI_COST_TOLERANCE
    gap = abs(cli_usd - metered_usd)
    if gap <= usd or gap <= share * metered_usd:
        return ""
    return (
        f"; the CLI reports a cost of ${cli_usd:.4f}, the gateway's metered tokens cost "
        f"${metered_usd:.4f} at the run's prices (the meter's is kept)"
    )
