"""A finished run written by hand as its workers and report activity write it, and its ledger.

The plan, run record, attempts (with a reward, transcript and diff each), gradings and final
scores when a service graded it, results, reports and a dashboard entry; the ledger is the
history those workers would leave. The audit tests edit it as someone who wants a better
number would.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from types import EllipsisType
from typing import Any, NamedTuple

from durabench.atomic import atomic_write
from durabench.audit import audit_run, digest_attempt, manifest_of
from durabench.models.audit import AuditReport, Ledger, LedgerAttempt
from durabench.models.benchmark_service import ServiceTarget
from durabench.models.results import AttemptResult
from durabench.models.suite_run import RecordRunInput
from durabench.results.dashboard import publish
from durabench.results.files import build_results, write_reports
from durabench.service.records import RunScore, TaskGrade, score_path
from durabench.settings.paths import RunPaths
from tests.unit.results_set import hand_result

RUN = "hand"
SCORES = {"baseline": 0.6, "sourcegraph_full": 0.5}


class Run(NamedTuple):
    """A finished run on disk, its ledger and its published dashboard."""

    paths: RunPaths
    ledger: Ledger
    board: Path


def _attempts() -> tuple[AttemptResult, ...]:
    retried = {("t3", "baseline", 1): {"exit_class": "infra_rate_limit", "reward": None}}
    return tuple(
        a.model_copy(
            update={
                "classifier_version": 3,
                "durabench_version": "0.1.0",
                **retried.get((a.task_id, a.lane, a.attempt), {}),
            }
        )
        for a in hand_result().attempts
    )


def grade_of(a: AttemptResult) -> TaskGrade:
    return TaskGrade.model_validate(
        {
            "run_id": RUN,
            "task_id": a.task_id,
            "lane": a.lane,
            "attempt": a.attempt,
            "exit_class": a.exit_class,
            "generation_status": "success",
            "api": "legacy",
            "status": "evaluated",
            "result": {"pass_percentage": (a.reward or 0.0) * 100},
        }
    )


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


READ_BY_PEOPLE = {
    "agent/trajectory.json": '{\n  "schema_version": "ATIF-v1.2",\n  "steps": []\n}',
    "verifier/test-stdout.txt": "57 passed, 0 failed\n",
    "final_message.txt": "Done, all tests pass.\n",
    "build.log": "#1 FROM durabench-base\n",
    "durabench/instruction.md": "Fix the bug.\n",
}
"""An attempt's files no number is read from, but a reader of the run sees (viewer, HTML)."""


def write_run(root: Path, *, service: bool) -> Run:
    """The hand run as a worker writes it, graded by a service or not; its ledger."""
    result = hand_result()
    request = result.plan.request
    if service:
        request = request.model_copy(update={"service": ServiceTarget(url="http://127.0.0.1:9")})
    plan = result.plan.model_copy(update={"request": request})
    paths = RunPaths.for_run(root / "runs", RUN)
    atomic_write(paths.plan, plan.model_dump_json())
    assert result.approval is not None
    approval = result.approval
    atomic_write(
        paths.run, RecordRunInput(plan=plan.summary(), approval=approval).model_dump_json()
    )
    entries = []
    for a in _attempts():
        where = paths.attempt(a.task_id, a.lane, a.attempt)
        atomic_write(where / "result.json", a.model_dump_json())
        atomic_write(where / "verifier" / "reward.txt", f"{a.reward or 0.0}\n")
        atomic_write(where / "agent" / "stdout.txt", '{"type": "result"}\n')
        atomic_write(where / "submission.patch", "--- a/x\n+++ b/x\n")
        for name, text in READ_BY_PEOPLE.items():
            atomic_write(where / name, text)
        graded = service and a.included
        if graded:
            atomic_write(where / "eval.json", grade_of(a).model_dump_json())
        entries.append(
            LedgerAttempt(
                task_id=a.task_id,
                lane=a.lane,
                attempt=a.attempt,
                ended="completed",
                recorded=True,
                digest=digest_attempt(where),
                graded=graded,
                grade=_sha(where / "eval.json"),
            )
        )
    if service:
        for lane, score in SCORES.items():
            run_score = RunScore(
                run_id=RUN, lane=lane, api="legacy", final_score=score, tasks_evaluated=("t1",)
            )
            atomic_write(score_path(paths, lane), run_score.model_dump_json())
    write_reports(paths, build_results(paths, approval, 1.0))
    board = root / "dashboard.json"
    publish(paths.root.parent, board, RUN, AuditReport(run_id=RUN, clean=True))
    ledger = Ledger(
        run_ended="completed",
        attempts=tuple(entries),
        plan=plan.summary(),
        approval=approval,
        task_ids=tuple(t.task_id for t in plan.tasks),
        final_scores=dict(SCORES) if service else None,
        files=manifest_of(paths.root, deep=False),  # as write_report returns it
    )
    return Run(paths, ledger, board)


def audit(run: Run, ledger: Ledger | None | EllipsisType = ...) -> AuditReport:
    """The run's audit against ``ledger`` (its own by default; ``None``: files only)."""
    used = run.ledger if isinstance(ledger, EllipsisType) else ledger
    skipped = "" if used is not None else "no server in a unit test"
    return audit_run(run.paths.root.parent, RUN, used, skipped=skipped, dashboard=run.board)


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def named(report: AuditReport, name: str) -> bool:
    return any(name in f.where or name in f.message for f in report.findings)
