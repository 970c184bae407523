"""Workflows reach activities by reference, and the pool keeps its names on the wire.

A call by string name is one neither a reader nor mypy can follow to its activity; the
pool's names are spelled once, below both layers, and must stay what histories hold.
"""

from __future__ import annotations

import ast
from pathlib import Path

from temporalio import workflow

from durabench.accounts.pool_wire import LEASE, POOL_WORKFLOW, RELEASE, SET_ACCOUNTS, SNAPSHOT
from workflows import AccountPoolWorkflow

WORKFLOWS = Path(__file__).resolve().parents[2] / "workflows"
_BY_NAME = {"execute_activity", "start_activity"}


def _calls_by_name(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _BY_NAME:
                found.append(f"{path.name}:{node.lineno} {node.func.attr}")
    return found


def test_no_workflow_calls_an_activity_by_name() -> None:
    calls = [call for path in sorted(WORKFLOWS.glob("*.py")) for call in _calls_by_name(path)]
    assert calls == []


def test_the_pool_answers_to_its_wire_names() -> None:
    pool = workflow._Definition.must_from_class(AccountPoolWorkflow)
    assert pool.name == POOL_WORKFLOW == "AccountPoolWorkflow"
    assert (
        set(pool.updates) == {SET_ACCOUNTS, LEASE, RELEASE} == {"set_accounts", "lease", "release"}
    )
    assert set(pool.queries) == {SNAPSHOT} == {"snapshot"}
