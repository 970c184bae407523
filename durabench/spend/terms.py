"""What a capped run's attempt carries to the gateway: its run, its task and its prices.

Prices per million tokens are micro-dollars per token, so a request's cost in
micro-dollars is its tokens times these rates, summed: the hand computation a test
states.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from durabench.models.prices import Price

__all__ = ["SpendTerms", "cost_micros", "worst_micros"]


class SpendTerms(BaseModel):
    """A capped run's attempt as its gateway charges it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    """The run whose cap the attempt's requests are reserved against."""
    task_id: str
    """The pair the spending is counted to (the run starts pairs by what they spend)."""
    rates: Price | None
    """The model's prices; ``None``: it has none, and a capped run cannot pay for it."""


def cost_micros(rates: Price, input: int, output: int, cache_read: int, cache_write: int) -> int:
    """What the tokens cost, in micro-dollars, rounded up."""
    total = (
        input * rates.input
        + output * rates.output
        + cache_read * rates.cache_read
        + cache_write * rates.cache_write
    )
    return math.ceil(round(total, 3))


def worst_micros(rates: Price, input_tokens: int, output_tokens: int) -> int:
    """The most a request can cost: its input at the dearest input rate, its output cap.

    Input may be written to the cache, which costs more than plain input; it is priced
    at whichever of the two is dearer.
    """
    dearest_input = max(rates.input, rates.cache_write, rates.cache_read)
    return math.ceil(round(input_tokens * dearest_input + output_tokens * rates.output, 3))
