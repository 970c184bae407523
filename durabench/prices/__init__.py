"""What a run costs: model prices (a built-in table and a team's ``prices.toml``).

The gateway meters every token an attempt uses, by kind; a price turns them into USD. A
model with no price is unpriced (``None``), never priced as zero.
"""

from durabench.models.prices import MAX_PRICE, CountedTokens, Price, PriceTable
from durabench.prices.builtin import BUILTIN_PRICES, READ_ON, SOURCES
from durabench.prices.cost import (
    CLI_COST_TOLERANCE,
    MeteredCost,
    attempt_cost,
    cli_cost_note,
    metered_cost,
)
from durabench.prices.file import PRICES_FILE, builtin_table, load_prices

__all__ = [
    "BUILTIN_PRICES",
    "CLI_COST_TOLERANCE",
    "MAX_PRICE",
    "PRICES_FILE",
    "READ_ON",
    "SOURCES",
    "CountedTokens",
    "MeteredCost",
    "Price",
    "PriceTable",
    "attempt_cost",
    "builtin_table",
    "cli_cost_note",
    "load_prices",
    "metered_cost",
]
