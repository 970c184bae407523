"""What a model's tokens cost: the price of each token kind, with where it was read.

A price is kept with its source and the day it was read, so a cost can be checked against
the page it came from, and a run records the prices it was costed with (the audit
recomputes its cost from the ledger with them, not with whatever the table says later).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Protocol

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MAX_PRICE", "UNVERIFIED", "CountedTokens", "Price", "PriceTable"]

MAX_PRICE = 100_000.0
"""More USD per million tokens than any model costs: past it, a price is a typo."""

UNVERIFIED = "unverified"
"""How a price's source begins when no published source could confirm it: the plan says so."""

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
    """Where the price was read: a pricing page, a price record, a contract; or, beginning
    ``unverified``, why it could not be checked and where to check it."""
    as_of: date
    """The day it was read (or found uncheckable) there."""

    @property
    def unverified(self) -> bool:
        """No published source confirmed this price (its source says so)."""
        return self.source.startswith(UNVERIFIED)

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

    def priced(self, model: str) -> Price | None:
        """``model``'s price at any provider; ``None`` when unpriced.

        A run's table holds its agent's one provider, so the model id alone names it.
        """
        return next(filter(None, (self.price(p, model) for p in self.prices)), None)

    def only(self, provider: str, *models: str) -> PriceTable:
        """The part of the table that prices ``models``.

        Those it leaves unpriced are not in it; it is empty when none is priced.
        """
        found = {m: p for m in models if (p := self.price(provider, m)) is not None}
        return PriceTable(prices={provider: found} if found else {})
