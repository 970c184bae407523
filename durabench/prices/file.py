"""``prices.toml`` in the durabench home: a team's prices over the built-in table.

A team pays what its contract says, and providers change prices faster than durabench is
released. Each entry replaces the built-in price of its model whole (a price is read
from one place, never mixed); a model no table names is unpriced. ::

    [anthropic.claude-sonnet-4-5]
    input = 3.0            # USD per million tokens
    output = 15.0
    cache_read = 0.30
    cache_write = 3.75
    source = "our Anthropic contract"
    as_of = 2026-11-01

    [gemini."gemini-2.5-pro"]   # a model id with a dot is quoted
    ...
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from durabench.documents import loads_toml
from durabench.errors import ConfigError
from durabench.json_files import first_error
from durabench.models.config import ModelApi
from durabench.models.prices import Price, PriceTable
from durabench.prices.builtin import BUILTIN_PRICES

__all__ = ["PRICES_FILE", "builtin_table", "load_prices"]

PRICES_FILE = "prices.toml"
"""In ``DURABENCH_HOME``: the team's prices, over :data:`~.builtin.BUILTIN_PRICES`."""

_PROVIDERS: tuple[ModelApi, ...] = ("anthropic", "openai", "gemini")
_FIELDS = "input, output, cache_read and cache_write (USD per million tokens), source, as_of"
_HOW = f"each [provider.model] table gives {_FIELDS} (see docs/results.md, Prices)"


def builtin_table() -> PriceTable:
    """The published prices durabench ships (:mod:`durabench.prices.builtin`)."""
    return PriceTable(prices={p: dict(models) for p, models in BUILTIN_PRICES.items()})


def load_prices(home: Path) -> PriceTable:
    """The built-in prices with ``home``'s ``prices.toml`` over them (when there is one).

    Raises:
        ConfigError: the file is not TOML, names a provider durabench does not call, or
            gives a price that is missing a field, negative or not a number; the message
            names the file, the line or key, and what to write.
    """
    path = home / PRICES_FILE
    table = builtin_table()
    if not path.is_file():
        return table
    try:
        doc = loads_toml(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}; {_HOW}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; fix or remove it") from None
    prices = {p: dict(models) for p, models in table.prices.items()}
    for provider, models in doc.items():
        if provider not in _PROVIDERS:
            raise ConfigError(
                f"{path}: [{provider}] is no provider durabench calls; use "
                f"{', '.join(_PROVIDERS)} ({_HOW})"
            )
        if not isinstance(models, dict):
            raise ConfigError(f"{path}: {provider} is not a table; {_HOW}")
        for model, fields in models.items():
            prices[provider][model] = _price(path, provider, model, fields)
    return PriceTable(prices=prices)


def _price(path: Path, provider: str, model: str, fields: Any) -> Price:
    key = f'{provider}."{model}"' if "." in model else f"{provider}.{model}"
    if not isinstance(fields, dict):
        raise ConfigError(f"{path}: {key} is not a table; {_HOW}")
    try:
        return Price.model_validate(fields)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {key}.{first_error(exc)}; {_HOW}") from None
