"""The audit recomputes each attempt's cost from its kept gateway ledger at the run's prices.

The prices are the ones the run recorded in its plan, not today's table: a cost edited
after the run is named, and a price changed since is no finding. The family check
classifies sessions of every kind (priced or not, each token kind, no traffic), writes
what the worker writes, and the audit agrees with the classifier every time; then any
edit of the cost is named.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from durabench.atomic import atomic_write
from durabench.audit import audit_run
from durabench.classify import classify
from durabench.gateway import read_ledger
from durabench.models.prices import Price, PriceTable
from durabench.models.results import AttemptResult
from durabench.models.suite_run import RecordRunInput
from durabench.models.verdict import ClassifyInput, Verdict
from durabench.results.files import build_results, write_reports
from durabench.settings.paths import RunPaths
from tests.unit.results_set import hand_result
from tests.unit.test_audit import RUN, _attempts

# A price of $3 a million in and $15 out for the hand run's model "m": not the built-in
# table's price of any model, so a check that priced with today's table would disagree.
PRICE = Price(
    input=3.0,
    output=15.0,
    cache_read=0.3,
    cache_write=3.75,
    source="a contract",
    as_of=date(2026, 1, 1),
)
PRICED = PriceTable(prices={"anthropic": {"m": PRICE}})
WHERE = "[cost] t1/baseline/attempt-1: "


def _entry(**usage: int) -> dict[str, Any]:
    return {
        "at": 1767225600.0,
        "provider": "anthropic",
        "path": "/v1/messages",
        "status": 200,
        "asked_model": "m",
        "usage": {"model": "m", **usage},
    }


def _run(
    tmp_path: Path, prices: PriceTable, entries: list[dict[str, Any]], **schema: int
) -> tuple[Path, Verdict]:
    """The hand run with its plan's ``prices``, and t1/baseline/1 metered by ``entries``."""
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("".join(json.dumps(e) + "\n" for e in entries))
    verdict = classify(
        ClassifyInput(
            requested_model="m",
            files_changed=1,
            metered=read_ledger(ledger),
            model_via_gateway=True,
            prices=prices,
        )
    )
    fields = verdict.model_dump(include={"cost_usd", "cli_cost_usd", "unpriced_model"})
    runs = tmp_path / "runs"
    paths = RunPaths.for_run(runs, RUN)
    hand = hand_result()
    plan = hand.plan.model_copy(update={"prices": prices, **schema})
    atomic_write(paths.plan, plan.model_dump_json())
    assert hand.approval is not None
    atomic_write(
        paths.run, RecordRunInput(plan=plan.summary(), approval=hand.approval).model_dump_json()
    )
    for a in _attempts(t1_baseline_1=fields):
        atomic_write(
            paths.attempt(a.task_id, a.lane, a.attempt) / "result.json", a.model_dump_json()
        )
    if entries:
        (paths.attempt("t1", "baseline", 1) / "gateway.jsonl").write_text(ledger.read_text())
    write_reports(paths, build_results(paths, hand.approval, 1.0))
    return runs, verdict


def _cost_findings(runs: Path) -> list[str]:
    report = audit_run(runs, RUN, None, skipped="no server in a unit test")
    return [line for line in report.lines() if line.startswith("[cost]")]


def _edit_cost(runs: Path, **update: Any) -> None:
    result = RunPaths.for_run(runs, RUN).attempt("t1", "baseline", 1) / "result.json"
    edited = AttemptResult.model_validate_json(result.read_text()).model_copy(update=update)
    atomic_write(result, edited.model_dump_json())


def test_a_cost_edited_after_the_run_is_named_with_the_ledgers_figure(tmp_path: Path) -> None:
    runs, verdict = _run(tmp_path, PRICED, [_entry(input=1_000, output=100)])
    # 1,000 in at $3 a million = 0.003, 100 out at $15 = 0.0015: $0.0045
    assert verdict.cost_usd == pytest.approx(0.0045)
    assert _cost_findings(runs) == []
    _edit_cost(runs, cost_usd=0.001)
    assert _cost_findings(runs) == [
        WHERE + "result.json says its cost is $0.001000, but its gateway ledger's tokens at "
        "the run's prices (plan.json) cost $0.004500: the cost was edited"
    ]


def test_a_cost_written_for_an_unpriced_run_is_named(tmp_path: Path) -> None:
    runs, verdict = _run(tmp_path, PriceTable(), [_entry(input=1_000, output=100)])
    assert (verdict.cost_usd, verdict.unpriced_model) == (None, "m")
    assert _cost_findings(runs) == []
    _edit_cost(runs, cost_usd=0.0, unpriced_model="")
    assert _cost_findings(runs) == [
        WHERE + "result.json says its cost is $0.000000, but the run's prices (plan.json) have "
        "none for m, which its gateway ledger shows it used: the cost was written after the run"
    ]


def test_a_removed_cost_is_named(tmp_path: Path) -> None:
    runs, _ = _run(tmp_path, PRICED, [_entry(input=1_000)])
    _edit_cost(runs, cost_usd=None)
    (line,) = _cost_findings(runs)
    assert line.startswith(WHERE + "result.json says its cost is none, but its gateway ledger")


def test_a_run_from_before_prices_were_recorded_is_not_checked(tmp_path: Path) -> None:
    runs, _ = _run(tmp_path, PriceTable(), [_entry(input=1_000)], schema_version=3)
    _edit_cost(runs, cost_usd=12.0, unpriced_model="")
    assert _cost_findings(runs) == []


_counts = st.integers(0, 10**8)
_sessions = st.lists(
    st.fixed_dictionaries(
        {"input": _counts, "output": _counts, "cache_read": _counts, "cache_write": _counts}
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    usages=_sessions,
    priced=st.booleans(),
    factor=st.sampled_from([0.0, 0.5, 0.999, 1.001, 2.0]),
)
def test_the_audit_agrees_with_the_classifier_and_names_any_edit(
    tmp_path_factory: pytest.TempPathFactory,
    usages: list[dict[str, int]],
    priced: bool,
    factor: float,
) -> None:
    tmp_path = tmp_path_factory.mktemp("run")
    runs, verdict = _run(
        tmp_path, PRICED if priced else PriceTable(), [_entry(**u) for u in usages]
    )
    assert _cost_findings(runs) == []
    if verdict.cost_usd is None:
        _edit_cost(runs, cost_usd=factor, unpriced_model="")
    elif verdict.cost_usd == 0:
        _edit_cost(runs, cost_usd=0.01 + factor)
    else:
        _edit_cost(runs, cost_usd=verdict.cost_usd * factor)
    assert len(_cost_findings(runs)) == 1
