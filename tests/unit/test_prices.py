"""Prices: the built-in table, a team's ``prices.toml`` over it, and what tokens cost.

Costs are stated by hand from the providers' pages (USD per million tokens), never
recomputed with the code under test.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from durabench.agents.llm_ids import KNOWN_MODELS
from durabench.errors import ConfigError
from durabench.models.verdict import TokenUsage
from durabench.prices import (
    BUILTIN_PRICES,
    PRICES_FILE,
    READ_ON,
    SOURCES,
    Price,
    PriceTable,
    builtin_table,
    load_prices,
)

M = 1_000_000

# provider, model, input, output, cache_read, cache_write tokens, USD worked by hand
HAND_COSTS = [
    # Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million
    ("anthropic", "claude-sonnet-4-5", M, 0, 0, 0, 3.00),
    ("anthropic", "claude-sonnet-4-5", 0, 2 * M, 0, 0, 30.00),
    ("anthropic", "claude-sonnet-4-5", 0, 0, M, 0, 0.30),
    ("anthropic", "claude-sonnet-4-5", 0, 0, 0, M, 3.75),
    # 0.03 + 0.03 + 0.03 + 0.075
    ("anthropic", "claude-sonnet-4-5", 10_000, 2_000, 100_000, 20_000, 0.165),
    # Opus 4.5: $5, $25, $0.50, $6.25: 0.05 + 0.05 + 0.05 + 0.125
    ("anthropic", "claude-opus-4-5", 10_000, 2_000, 100_000, 20_000, 0.275),
    # Opus 4.1: $15, $75, $1.50, $18.75 per million each
    ("anthropic", "claude-opus-4-1", M, M, M, M, 110.25),
    # Haiku 4.5 by its dated snapshot: $1 + $5 + $0.10 + $1.25
    ("anthropic", "claude-haiku-4-5-20251001", M, M, M, M, 7.35),
    # gpt-5-codex: $1.25 in, $0.125 cached, $10 out: 0.5 + 0.5 + 0.2
    ("openai", "gpt-5-codex", 400_000, 50_000, 1_600_000, 0, 1.20),
    # o4-mini: $1.10, $0.275 cached, $4.40 out
    ("openai", "o4-mini", M, M, M, 0, 5.775),
    # gemini-2.5-pro: $1.25 in, $0.125 cached, $10 out: 0.25 + 0.3 + 0.1
    ("gemini", "gemini-2.5-pro", 200_000, 30_000, 800_000, 0, 0.65),
    # gemini-2.5-flash: $0.30, $2.50, $0.03
    ("gemini", "gemini-2.5-flash", M, M, M, 0, 2.83),
]


@pytest.mark.parametrize(("provider", "model", "i", "o", "r", "w", "usd"), HAND_COSTS)
def test_cost_is_the_hand_computed_figure(
    provider: str, model: str, i: int, o: int, r: int, w: int, usd: float
) -> None:
    price = builtin_table().price(provider, model)
    assert price is not None
    usage = TokenUsage(input=i, output=o, cache_read=r, cache_write=w)
    assert price.cost_usd(usage) == pytest.approx(usd, rel=1e-12)


def test_every_known_model_has_a_published_price() -> None:
    """A model the plan accepts without ``--allow-unknown-model`` is priced."""
    unpriced = [
        f"{provider}/{model}"
        for provider, models in KNOWN_MODELS.items()
        for model in models
        if builtin_table().price(provider, model) is None
    ]
    assert unpriced == []


def test_every_builtin_price_names_its_page_and_day() -> None:
    for provider, models in BUILTIN_PRICES.items():
        for price in models.values():
            assert price.source == SOURCES[provider]
            assert price.source.startswith("https://")
            assert price.as_of == READ_ON


def test_an_unknown_model_is_unpriced_never_zero() -> None:
    table = builtin_table()
    assert table.price("anthropic", "claude-sonnet-9") is None
    assert table.price("openai", "claude-sonnet-4-5") is None  # another provider's
    assert table.price("bedrock", "claude-sonnet-4-5") is None
    assert table.price("anthropic", "claude-sonnet-4-5-latest") is None  # no dated snapshot
    assert table.only("anthropic", "claude-sonnet-9") == PriceTable()


def test_only_keeps_the_runs_model_under_its_own_id() -> None:
    kept = builtin_table().only("anthropic", "claude-sonnet-4-5-20250929")
    assert list(kept.prices) == ["anthropic"]
    assert list(kept.prices["anthropic"]) == ["claude-sonnet-4-5-20250929"]
    assert (
        kept.price("anthropic", "claude-sonnet-4-5-20250929")
        == BUILTIN_PRICES["anthropic"]["claude-sonnet-4-5"]
    )
    assert PriceTable.model_validate_json(kept.model_dump_json()) == kept


# --- the property: linear and monotone in each kind, zero tokens cost zero ---

_usd = st.integers(0, 10_000_000).map(lambda hundredths_of_cents: hundredths_of_cents / 10_000)
"""A price as published: up to $1,000 a million, to a hundredth of a cent."""
_prices = st.builds(
    Price,
    input=_usd,
    output=_usd,
    cache_read=_usd,
    cache_write=_usd,
    source=st.just("a contract"),
    as_of=st.just(date(2026, 1, 1)),
) | st.sampled_from([p for models in BUILTIN_PRICES.values() for p in models.values()])
_counts = st.integers(0, 10**10)
_usages = st.builds(
    TokenUsage, input=_counts, output=_counts, cache_read=_counts, cache_write=_counts
)
_KINDS = ("input", "output", "cache_read", "cache_write")


def _plus(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(**{k: getattr(a, k) + getattr(b, k) for k in _KINDS})


@given(_prices)
def test_zero_tokens_cost_zero(price: Price) -> None:
    assert price.cost_usd(TokenUsage()) == 0.0


@given(_prices, _usages, _usages)
def test_cost_is_additive(price: Price, a: TokenUsage, b: TokenUsage) -> None:
    together = price.cost_usd(_plus(a, b))
    assert math.isclose(together, price.cost_usd(a) + price.cost_usd(b), rel_tol=1e-9)


@given(_prices, _usages, st.integers(0, 1_000))
def test_cost_scales_with_the_tokens(price: Price, usage: TokenUsage, k: int) -> None:
    scaled = TokenUsage(**{kind: getattr(usage, kind) * k for kind in _KINDS})
    assert math.isclose(price.cost_usd(scaled), k * price.cost_usd(usage), rel_tol=1e-9)


@given(_prices, _usages, st.sampled_from(_KINDS), st.integers(1, 10**9))
def test_more_tokens_of_a_kind_never_cost_less(
    price: Price, usage: TokenUsage, kind: str, more: int
) -> None:
    grown = usage.model_copy(update={kind: getattr(usage, kind) + more})
    assert price.cost_usd(grown) >= price.cost_usd(usage)
    if getattr(price, kind) > 0:  # a million more cost at least a hundredth of a cent more
        million = usage.model_copy(update={kind: getattr(usage, kind) + 1_000_000})
        assert price.cost_usd(million) > price.cost_usd(usage)


# --- prices.toml ---

_SONNET = """
[anthropic.claude-sonnet-4-5]
input = 2.0
output = 10.0
cache_read = 0.2
cache_write = 2.5
source = "our contract"
as_of = 2026-11-01
"""


def _home(tmp_path: Path, text: str) -> Path:
    (tmp_path / PRICES_FILE).write_text(text)
    return tmp_path


def test_no_file_is_the_builtin_table(tmp_path: Path) -> None:
    assert load_prices(tmp_path) == builtin_table()


def test_the_file_replaces_a_models_price_and_adds_models(tmp_path: Path) -> None:
    text = _SONNET + _SONNET.replace("anthropic.claude-sonnet-4-5", 'gemini."gemini-9.0-pro"')
    table = load_prices(_home(tmp_path, text))
    sonnet = table.price("anthropic", "claude-sonnet-4-5-20250929")
    assert sonnet is not None
    assert (sonnet.source, sonnet.as_of) == ("our contract", date(2026, 11, 1))
    # 1M of each kind at 2 + 10 + 0.2 + 2.5
    assert sonnet.cost_usd(TokenUsage(input=M, output=M, cache_read=M, cache_write=M)) == (
        pytest.approx(14.7)
    )
    assert table.price("gemini", "gemini-9.0-pro") is not None
    assert table.price("anthropic", "claude-opus-4-5") == builtin_table().price(
        "anthropic", "claude-opus-4-5"
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[anthropic.claude-sonnet-4-5\ninput = 1", "line 1"),
        (_SONNET.replace("anthropic.", "bedrock."), "[bedrock] is no provider"),
        ("anthropic = 3", "anthropic is not a table"),
        ("[anthropic]\nclaude-sonnet-4-5 = 3", "anthropic.claude-sonnet-4-5 is not a table"),
        (_SONNET.replace("output = 10.0\n", ""), "anthropic.claude-sonnet-4-5.output: Field"),
        (_SONNET.replace("input = 2.0", "input = -2.0"), "claude-sonnet-4-5.input: Input should"),
        (_SONNET.replace("input = 2.0", 'input = "2"'), "claude-sonnet-4-5.input: Input should"),
        (_SONNET.replace("input = 2.0", "input = nan"), "claude-sonnet-4-5.input: Input should"),
        (_SONNET.replace("input = 2.0", "input = 2e9"), "claude-sonnet-4-5.input: Input should"),
        (_SONNET.replace('source = "our contract"', 'source = ""'), ".source: String should"),
        (_SONNET.replace("as_of = 2026-11-01", 'as_of = "soon"'), ".as_of: Input should"),
        (_SONNET + "cents = true\n", "claude-sonnet-4-5.cents: Extra inputs"),
        (
            _SONNET.replace("anthropic.claude-sonnet-4-5", 'gemini."gemini-2.5-pro"').replace(
                "output = 10.0\n", ""
            ),
            'gemini."gemini-2.5-pro".output',
        ),
    ],
)
def test_a_bad_file_names_itself_the_place_and_the_fix(
    tmp_path: Path, text: str, named: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_prices(_home(tmp_path, text))
    message = str(caught.value)
    assert str(tmp_path / PRICES_FILE) in message
    assert named in message
    assert "USD per million tokens" in message
