"""The providers' published prices for the models durabench knows (standard tier).

Read from each provider's public pricing page on :data:`READ_ON`. They are list prices
for prompts of standard length: Anthropic's Sonnet with a 1M-token context and Gemini's
Pro models charge more past 200,000 prompt tokens, and batch, priority or regional
endpoints differ; a team whose prices differ says so in ``prices.toml``
(:mod:`durabench.prices.file`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from durabench.models.prices import Price

__all__ = ["BUILTIN_PRICES", "READ_ON", "SOURCES"]

READ_ON = date(2026, 11, 29)
"""The day the prices below were read from the pages in :data:`SOURCES`."""

SOURCES: Mapping[str, str] = {
    "anthropic": "https://docs.claude.com/en/docs/about-claude/pricing",
    "openai": "https://platform.openai.com/docs/pricing",
    "gemini": "https://ai.google.dev/gemini-api/docs/pricing",
}
"""Each provider's public pricing page."""


def _price(provider: str, input: float, output: float, read: float, write: float) -> Price:
    return Price(
        input=input,
        output=output,
        cache_read=read,
        cache_write=write,
        source=SOURCES[provider],
        as_of=READ_ON,
    )


def _anthropic(input: float, output: float) -> Price:
    """Cache reads are a tenth of input, five-minute cache writes 1.25 times it."""
    return _price("anthropic", input, output, input / 10, input * 1.25)


def _openai(input: float, cached: float, output: float) -> Price:
    return _price("openai", input, output, cached, 0.0)


def _gemini(input: float, cached: float, output: float) -> Price:
    return _price("gemini", input, output, cached, 0.0)


BUILTIN_PRICES: Mapping[str, Mapping[str, Price]] = {
    "anthropic": {
        "claude-opus-4-5": _anthropic(5.0, 25.0),
        "claude-opus-4-1": _anthropic(15.0, 75.0),
        "claude-opus-4-0": _anthropic(15.0, 75.0),
        "claude-sonnet-4-5": _anthropic(3.0, 15.0),
        "claude-sonnet-4-0": _anthropic(3.0, 15.0),
        "claude-haiku-4-5": _anthropic(1.0, 5.0),
        "claude-3-7-sonnet-latest": _anthropic(3.0, 15.0),
        "claude-3-5-haiku-latest": _anthropic(0.8, 4.0),
    },
    "openai": {
        "gpt-5": _openai(1.25, 0.125, 10.0),
        "gpt-5-mini": _openai(0.25, 0.025, 2.0),
        "gpt-5-nano": _openai(0.05, 0.005, 0.4),
        "gpt-5-codex": _openai(1.25, 0.125, 10.0),
        "gpt-5-codex-mini": _openai(0.25, 0.025, 2.0),
        "gpt-5.1": _openai(1.25, 0.125, 10.0),
        "gpt-5.1-codex": _openai(1.25, 0.125, 10.0),
        "gpt-5.1-codex-mini": _openai(0.25, 0.025, 2.0),
        "gpt-5.1-codex-max": _openai(1.25, 0.125, 10.0),
        "gpt-4.1": _openai(2.0, 0.5, 8.0),
        "o3": _openai(2.0, 0.5, 8.0),
        "o4-mini": _openai(1.1, 0.275, 4.4),
        "codex-mini-latest": _openai(1.5, 0.375, 6.0),
    },
    "gemini": {
        "gemini-3-pro-preview": _gemini(2.0, 0.2, 12.0),
        "gemini-2.5-pro": _gemini(1.25, 0.125, 10.0),
        "gemini-2.5-flash": _gemini(0.3, 0.03, 2.5),
        "gemini-2.5-flash-lite": _gemini(0.1, 0.01, 0.4),
    },
}
"""USD per million tokens by provider and model id (a dated snapshot is its model)."""
