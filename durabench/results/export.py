"""A run's results as rows, for pandas and spreadsheets: one per attempt, or per pair.

Rows are flat: a nested field becomes dotted columns (``tokens.input``,
``signals.claims_complete``), each phase's duration a ``seconds.<phase>`` column, and a
list stays a list (JSON text in CSV). A pair row has each lane's Best, Mean and attempt
counts as ``<lane>.best``..., the agent CLI versions it ran as ``<lane>.cli_versions``,
and the paired difference of the means as ``delta``, of the cost as ``cost_delta_usd`` and
of the tokens as ``token_delta``.

CSV is opened in spreadsheets, and a text cell an agent wrote (a final message, a reason)
could be a formula a spreadsheet runs: a text cell starting with ``=``, ``+``, ``-``,
``@``, tab or CR is written with a leading ``'`` (the OWASP CSV-injection advice), and
control characters are written out as escapes. Numbers are written as they are. JSON lines
hold the text exactly.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from durabench.models.results import AttemptResult, RunResult
from durabench.results.run_versions import lane_cli_versions
from durabench.text_safety import csv_cell

__all__ = ["attempt_rows", "pair_rows", "to_csv", "to_jsonl"]

Row = dict[str, Any]


def _flat(value: Mapping[str, Any], prefix: str = "") -> Row:
    row: Row = {}
    for key, item in value.items():
        if isinstance(item, Mapping):
            row |= _flat(item, f"{prefix}{key}.")
        else:
            row[f"{prefix}{key}"] = item
    return row


def _attempt_row(a: AttemptResult, excluded: Mapping[str, str]) -> Row:
    data = a.model_dump(mode="json", exclude={"timings"})
    row = _flat(data)
    row["included"], row["infra"] = a.included, a.infra
    row["pair_excluded"] = a.task_id in excluded
    for t in a.timings:
        row[f"seconds.{t.phase}"] = (t.finished_at - t.started_at).total_seconds()
    return row


def attempt_rows(result: RunResult) -> list[Row]:
    """One row per attempt, retries included, in the order of ``results.json``."""
    return [_attempt_row(a, result.excluded) for a in result.attempts]


def pair_rows(result: RunResult) -> list[Row]:
    """One row per task of the plan: its lanes' numbers side by side, and the delta."""
    card = result.scorecard
    cells = {(c.task_id, c.lane): c for c in card.cells} if card else {}
    deltas = {d.task_id: d.delta for d in card.comparison.tasks} if card and card.comparison else {}
    costs = {c.task_id: c for c in card.cost.tasks} if card and card.cost else {}
    rows = []
    for task in result.plan.tasks:
        tid = task.task_id
        row: Row = {"run_id": result.plan.request.run_id, "task_id": tid}
        row["excluded"] = tid in result.excluded
        row["exclusion_reason"] = result.excluded.get(tid, "")
        for lane in result.plan.lanes:
            cell = cells.get((tid, lane))
            row[f"{lane}.best"] = cell.best if cell else None
            row[f"{lane}.mean"] = cell.mean if cell else None
            row[f"{lane}.included"] = cell.included if cell else 0
            row[f"{lane}.attempts"] = sum(
                1 for a in result.attempts if a.task_id == tid and a.lane == lane
            )
        mine = [a for a in result.attempts if a.task_id == tid]
        for lane, versions in lane_cli_versions(mine, result.plan.lanes).items():
            row[f"{lane}.cli_versions"] = list(versions)
        row["delta"] = deltas.get(tid)
        cost = costs.get(tid)  # null: not compared, or an arm unpriced
        row["cost_delta_usd"] = cost.delta_usd if cost else None
        row["token_delta"] = cost.delta_tokens if cost else None
        rows.append(row)
    return rows


def to_jsonl(rows: Iterable[Row]) -> str:
    """JSON lines: one object per row."""
    return "".join(json.dumps(row) + "\n" for row in rows)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return csv_cell(json.dumps(value))
    return csv_cell(value)


def to_csv(rows: list[Row]) -> str:
    """CSV with a header of every column any row has, in first-seen order; empty for None."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _cell(row.get(key)) for key in columns})
    return out.getvalue()
