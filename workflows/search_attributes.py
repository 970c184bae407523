"""Search attributes durabench sets, so the Web UI lists runs by suite, model and status."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

from durabench.models import RunRequest

__all__ = [
    "CATEGORY",
    "CONFIG_MODE",
    "MODEL",
    "RUN_STATUS",
    "SEARCH_ATTRIBUTES",
    "SUITE",
    "for_request",
]

SUITE = SearchAttributeKey.for_keyword("DurabenchSuite")
MODEL = SearchAttributeKey.for_keyword("DurabenchModel")
CONFIG_MODE = SearchAttributeKey.for_keyword("DurabenchConfigMode")
CATEGORY = SearchAttributeKey.for_keyword("DurabenchCategory")
RUN_STATUS = SearchAttributeKey.for_keyword("DurabenchRunStatus")

SEARCH_ATTRIBUTES = (SUITE, MODEL, CONFIG_MODE, CATEGORY, RUN_STATUS)
"""Every key, for registration on the server."""


def for_request(request: RunRequest) -> TypedSearchAttributes:
    """The attributes a run starts with."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(SUITE, request.suite),
            SearchAttributePair(MODEL, request.model),
            SearchAttributePair(CONFIG_MODE, request.config_mode),
            SearchAttributePair(CATEGORY, request.category),
            SearchAttributePair(RUN_STATUS, "planning"),
        ]
    )
