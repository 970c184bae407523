"""The queries ``status`` and the live view ask by name are the ones the workflows answer.

They are asked by name so a client loads no workflow module; a renamed query, or one whose
answer changed type, would otherwise fail only against a live run.
"""

from __future__ import annotations

import typing

import pytest
from temporalio import workflow

from starter.queries import PAIR_QUERIES, RUN_QUERIES
from workflows.paired_task import PairedTaskWorkflow
from workflows.suite_run import SuiteRunWorkflow


@pytest.mark.parametrize(
    ("cls", "asked"), [(SuiteRunWorkflow, RUN_QUERIES), (PairedTaskWorkflow, PAIR_QUERIES)]
)
def test_each_query_asked_by_name_is_answered_with_its_type(
    cls: type, asked: dict[str, type]
) -> None:
    answered = workflow._Definition.must_from_class(cls).queries
    for name, answer in asked.items():
        assert name in answered, f"{cls.__name__} answers no query {name!r}"
        hints = typing.get_type_hints(answered[name].fn)
        assert answer in (hints["return"], *typing.get_args(hints["return"])), name
