"""A gateway ledger for classifier tests: a session whose model answered every request."""

from __future__ import annotations

from typing import Any

from durabench.models.verdict import MeteredUsage, TokenUsage

MODEL = "claude-sonnet-4-5"


def answered(**fields: Any) -> MeteredUsage:
    """Six requests, all answered by :data:`MODEL`, with ``fields`` changed."""
    base: dict[str, Any] = {
        "requests": 6,
        "tokens": TokenUsage(input=600, output=60),
        "served_models": (MODEL,),
        "asked_models": (MODEL,),
        "last_status": 200,
    }
    return MeteredUsage.model_validate(base | fields)
