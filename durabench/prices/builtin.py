"""The list prices of the models durabench knows, each with the source it was checked against.

Every row was checked on :data:`READ_ON` against stored copies of public sources: the
provider's own pricing or model page where a copy held the row, else LiteLLM's price
record (``model_prices_and_context_window.json``) at a named commit. The copies are not
dated, so a row can lag a change made since; docs/results.md (Prices) lists what was
read. A row no source confirmed says so: its source begins ``unverified`` and the plan of
a run costed with it warns.

They are list prices for prompts of standard length: Anthropic's Sonnet with a 1M-token
context and Gemini's Pro models charge more past 200,000 prompt tokens, and batch,
priority or regional endpoints differ; a team whose prices differ says so in
``prices.toml`` (:mod:`durabench.prices.file`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from durabench.models.prices import UNVERIFIED, Price

__all__ = ["BUILTIN_PRICES", "READ_ON", "SOURCES"]

READ_ON = date(2026, 11, 29)
"""The day each row was checked against the source it names (every row's ``as_of``)."""

SOURCES: Mapping[str, str] = {
    "anthropic": "https://platform.claude.com/docs/en/about-claude/pricing",
    "openai": "https://developers.openai.com/api/docs/pricing",
    "gemini": "https://ai.google.dev/gemini-api/docs/pricing",
}
"""Each provider's public pricing page: where to check a price (a row names what it was
checked against, which may be another source)."""

_ANTHROPIC = f"{SOURCES['anthropic']} (stored copy, undated; it lists Claude Fable 5.1)"
_ANTHROPIC_2025 = (
    "https://docs.anthropic.com/en/docs/about-claude/pricing "
    "(stored copy, undated; its newest model is Claude Opus 4.1)"
)
_LITELLM = (
    "https://github.com/BerriAI/litellm/blob/00035b69f416be24e2e323c13198d9b7d2d1bdf9/"
    "model_prices_and_context_window.json (LiteLLM's price record at that commit, undated; "
    "it prices Claude Sonnet 5)"
)


def _openai_page(model: str) -> str:
    return f"https://developers.openai.com/api/docs/models/{model} (stored copy, undated)"


def _unverified(provider: str) -> str:
    return (
        f"{UNVERIFIED}: written from memory of the provider's page; no stored copy of it or "
        f"of LiteLLM's record has this model; check it at {SOURCES[provider]} before "
        "publishing a cost"
    )


def _price(source: str, input: float, output: float, read: float, write: float) -> Price:
    return Price(
        input=input, output=output, cache_read=read, cache_write=write, source=source, as_of=READ_ON
    )


def _anthropic(source: str, input: float, output: float) -> Price:
    """Cache reads are a tenth of input, five-minute cache writes 1.25 times it."""
    return _price(source, input, output, input / 10, input * 1.25)


def _openai(source: str, input: float, cached: float, output: float) -> Price:
    return _price(source, input, output, cached, 0.0)


def _gemini(source: str, input: float, cached: float, output: float) -> Price:
    return _price(source, input, output, cached, 0.0)


BUILTIN_PRICES: Mapping[str, Mapping[str, Price]] = {
    "anthropic": {
        "claude-opus-4-5": _anthropic(_ANTHROPIC, 5.0, 25.0),
        "claude-opus-4-1": _anthropic(_ANTHROPIC, 15.0, 75.0),
        "claude-opus-4-0": _anthropic(_ANTHROPIC_2025, 15.0, 75.0),
        "claude-sonnet-4-5": _anthropic(_LITELLM, 3.0, 15.0),
        "claude-sonnet-4-0": _anthropic(_ANTHROPIC_2025, 3.0, 15.0),
        "claude-haiku-4-5": _anthropic(_LITELLM, 1.0, 5.0),
        "claude-3-7-sonnet-latest": _anthropic(_ANTHROPIC_2025, 3.0, 15.0),
        "claude-3-5-haiku-latest": _anthropic(_ANTHROPIC_2025, 0.8, 4.0),
    },
    "openai": {
        "gpt-5": _openai(_LITELLM, 1.25, 0.125, 10.0),
        "gpt-5-mini": _openai(_LITELLM, 0.25, 0.025, 2.0),
        "gpt-5-nano": _openai(_LITELLM, 0.05, 0.005, 0.4),
        "gpt-5-codex": _openai(_openai_page("gpt-5-codex"), 1.25, 0.125, 10.0),
        "gpt-5-codex-mini": _openai(_unverified("openai"), 0.25, 0.025, 2.0),
        "gpt-5.1": _openai(_LITELLM, 1.25, 0.125, 10.0),
        "gpt-5.1-codex": _openai(_LITELLM, 1.25, 0.125, 10.0),
        "gpt-5.1-codex-mini": _openai(_LITELLM, 0.25, 0.025, 2.0),
        "gpt-5.1-codex-max": _openai(_LITELLM, 1.25, 0.125, 10.0),
        "gpt-4.1": _openai(_LITELLM, 2.0, 0.5, 8.0),
        "o3": _openai(_LITELLM, 2.0, 0.5, 8.0),
        "o4-mini": _openai(_LITELLM, 1.1, 0.275, 4.4),
        "codex-mini-latest": _openai(_openai_page("codex-mini-latest"), 1.5, 0.375, 6.0),
    },
    "gemini": {
        "gemini-3-pro-preview": _gemini(_LITELLM, 2.0, 0.2, 12.0),
        "gemini-2.5-pro": _gemini(_LITELLM, 1.25, 0.125, 10.0),
        "gemini-2.5-flash": _gemini(_LITELLM, 0.3, 0.03, 2.5),
        "gemini-2.5-flash-lite": _gemini(_LITELLM, 0.1, 0.01, 0.4),
    },
}
"""USD per million tokens by provider and model id (a dated snapshot is its model)."""
