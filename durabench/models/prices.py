"""What a model's tokens cost: the price of each token kind, with where it was read.

A price is kept with its source and the day it was read, so a cost can be checked against
the page it came from, and a run records the prices it was costed with (the audit
recomputes its cost from the ledger with them, not with whatever the table says later).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_PRICE", "CountedTokens", "Price", "PriceTable"]

MAX_PRICE = 100_000.0
"""More USD per million tokens than any model costs: past it, a price is a typo."""

_MILLION = 1_000_000


class CountedTokens(Protocol):
    """Tokens by kind, as the gateway meters them (a ledger line's or an attempt's)."""

    @property
    def input(self) -> int:
        """Input tokens, not counting cache reads."""

    @property
    def output(self) -> int:
        """Output tokens (reasoning included)."""

    @property
    def cache_read(self) -> int:
        """Input tokens served from the prompt cache."""

    @property
    def cache_write(self) -> int:
        """Input tokens written to the prompt cache."""


UsdPerMillion = Annotated[float, Field(ge=0.0, le=MAX_PRICE, allow_inf_nan=False, strict=True)]
"""USD per million tokens: a plain number, finite, from zero up to :data:`MAX_PRICE`."""


class Price(BaseModel):
    """One model's price: USD per million tokens of each kind the gateway meters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: UsdPerMillion
    """Input tokens not read from the cache."""
    output: UsdPerMillion
    """Output tokens, reasoning ("thinking") included."""
    cache_read: UsdPerMillion
    """Input tokens read from the prompt cache."""
    cache_write: UsdPerMillion
    """Input tokens written to the prompt cache (Anthropic's five-minute writes; OpenAI
    and Gemini charge none and their answers count none)."""
    source: str = Field(min_length=1)
    """Where the price was read: the provider's pricing page, or a contract."""
    as_of: date
    """The day it was read there."""

    def cost_usd(self, usage: CountedTokens) -> float:
        """What ``usage`` costs at this price, in USD."""
        return (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_read * self.cache_read
            + usage.cache_write * self.cache_write
        ) / _MILLION


class PriceTable(BaseModel):
    """Prices by provider and model id.

    The built-in table with a team's overrides, or the part of it a run was costed with
    (kept with the run).
    """

    model_config = ConfigDict(frozen=True)

    prices: dict[str, dict[str, Price]] = Field(default_factory=dict)
    """By provider (``anthropic``, ``openai``, ``gemini``), then model id."""

    def price(self, provider: str, model: str) -> Price | None:
        """``model``'s price at ``provider``; ``None`` when unpriced, never zero.

        Its own, else the price of the model it is a dated snapshot of
        (``claude-sonnet-4-5-20250929``).
        """
        from durabench.agents.llm_ids import served_model_matches

        models = self.prices.get(provider, {})
        if model in models:
            return models[model]
        return next((p for name, p in models.items() if served_model_matches(name, model)), None)

    def only(self, provider: str, model: str) -> PriceTable:
        """The part of the table that prices ``model`` (empty when it is unpriced)."""
        found = self.price(provider, model)
        return PriceTable(prices={provider: {model: found}} if found is not None else {})
