"""Search attributes durabench sets, so the Web UI lists runs and attempts by what they are.

A run carries its suite, model, config mode, category and status (planning through
completed, rejected, expired, failed or cancelled); an attempt carries its task, lane and
model from the start, and its exit class and reward once recorded: "every rate-limited
attempt of this model" is the one filter
``DurabenchModel = 'm' AND DurabenchExitClass = 'infra_rate_limit'``.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from temporalio import workflow
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    SearchAttributeUpdate,
    TypedSearchAttributes,
)

with workflow.unsafe.imports_passed_through():
    from durabench.models.attempt import AttemptRef
    from durabench.models.results import AttemptResult
    from durabench.models.run import PlanSummary, RunRequest

__all__ = [
    "CATEGORY",
    "CONFIG_MODE",
    "EXIT_CLASS",
    "LANE",
    "MODEL",
    "REWARD",
    "RUN_STATUS",
    "SEARCH_ATTRIBUTES",
    "SUITE",
    "TASK",
    "for_attempt",
    "for_plan",
    "for_request",
    "for_result",
    "index_type",
    "suite_of",
    "type_name",
]

SUITE = SearchAttributeKey.for_keyword("DurabenchSuite")
MODEL = SearchAttributeKey.for_keyword("DurabenchModel")
CONFIG_MODE = SearchAttributeKey.for_keyword("DurabenchConfigMode")
CATEGORY = SearchAttributeKey.for_keyword("DurabenchCategory")
RUN_STATUS = SearchAttributeKey.for_keyword("DurabenchRunStatus")
TASK = SearchAttributeKey.for_keyword("DurabenchTask")
LANE = SearchAttributeKey.for_keyword("DurabenchLane")
EXIT_CLASS = SearchAttributeKey.for_keyword("DurabenchExitClass")
REWARD = SearchAttributeKey.for_float("DurabenchReward")

SEARCH_ATTRIBUTES: tuple[SearchAttributeKey[Any], ...] = (
    SUITE,
    MODEL,
    CONFIG_MODE,
    CATEGORY,
    RUN_STATUS,
    TASK,
    LANE,
    EXIT_CLASS,
    REWARD,
)
"""Every key, for registration on the server (with :func:`type_name`)."""


def type_name(key: SearchAttributeKey[Any]) -> str:
    """The key's type as the ``temporal`` CLI names it: ``Keyword``, ``Double``."""
    return key.indexed_value_type.name.title()


def index_type(key: SearchAttributeKey[Any]) -> IndexedValueType.ValueType:
    """The key's type as the operator API (registration) takes it."""
    return IndexedValueType.ValueType(int(key.indexed_value_type))


def suite_of(request: RunRequest, selection_file: str | None = None) -> str:
    """What the UI lists a run under: the suite, or the name of the tasks' file or dataset.

    That is the selection or dataset file's name, else the service's dataset; a rerun's
    request names its suite once it is planned.
    """
    if request.suite:
        return request.suite
    named = request.selection or selection_file or request.dataset_file
    if named:
        return PurePath(named).stem
    if request.service is not None and request.service.dataset:
        return request.service.dataset
    return ""


def for_request(request: RunRequest) -> TypedSearchAttributes:
    """The attributes a run starts with."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(SUITE, suite_of(request)),
            SearchAttributePair(MODEL, request.agent.model),
            SearchAttributePair(CONFIG_MODE, request.config_mode),
            SearchAttributePair(CATEGORY, request.category),
            SearchAttributePair(RUN_STATUS, "planning"),
        ]
    )


def for_plan(plan: PlanSummary) -> list[SearchAttributeUpdate[str]]:
    """What the plan settles: a rerun's suite and model are the earlier run's."""
    req = plan.request
    return [
        SUITE.value_set(suite_of(req, plan.selection_file)),
        MODEL.value_set(req.agent.model),
        CONFIG_MODE.value_set(req.config_mode),
        CATEGORY.value_set(req.category),
    ]


def for_attempt(ref: AttemptRef) -> TypedSearchAttributes:
    """The attributes an attempt's workflow starts with."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(TASK, ref.task.task_id),
            SearchAttributePair(LANE, ref.lane),
            SearchAttributePair(MODEL, ref.agent.model),
        ]
    )


def for_result(result: AttemptResult) -> list[SearchAttributeUpdate[Any]]:
    """What a recorded attempt adds: its exit class, and its reward where it has one."""
    updates: list[SearchAttributeUpdate[Any]] = [EXIT_CLASS.value_set(result.exit_class)]
    if result.reward is not None:
        updates.append(REWARD.value_set(result.reward))
    return updates
