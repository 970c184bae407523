"""A run's spend cap: the book every host draws blocks from, each host's purse, the terms."""

from durabench.spend.book import (
    MICROS,
    BlockAnswer,
    HostReport,
    PairAnswer,
    PairAsk,
    SpendBook,
    SpendCarried,
    SpendProgress,
    SpendState,
    StartPairsInput,
    micros,
    usd,
)
from durabench.spend.purse import Held, Hold, Purse, SpendFiles, Used
from durabench.spend.terms import SpendTerms, cost_micros, worst_micros

__all__ = [
    "MICROS",
    "BlockAnswer",
    "Held",
    "Hold",
    "HostReport",
    "PairAnswer",
    "PairAsk",
    "Purse",
    "SpendBook",
    "SpendCarried",
    "SpendProgress",
    "SpendFiles",
    "SpendState",
    "StartPairsInput",
    "SpendTerms",
    "Used",
    "cost_micros",
    "micros",
    "usd",
    "worst_micros",
]
