"""``python -m starter audit <run-id> [--json]``: a finished run against its durable history.

One line per finding, exit 0 only when the run is clean. When the server has no history of
the run, what the files alone show is checked, and the audit says the ledger was skipped.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import NamedTuple

import click
from temporalio.client import Client

from durabench.audit import audit_run, read_attempts
from durabench.errors import ConfigError
from durabench.models.audit import AuditReport, Ledger
from durabench.models.run import RunPlan
from durabench.results.earlier_runs import read_plan
from durabench.results.store import pulled
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from runtime.client import connect
from starter.console import console
from starter.history_attempts import LedgerGone, read_ledger
from starter.options import run_async, run_id_argument
from starter.refusal import plain

__all__ = ["Audited", "audit", "audit_main", "audit_with_server", "print_audit"]


async def audit_main(
    run_id: str,
    *,
    client: Client | None = None,
    settings: Settings | None = None,
    dashboard: Path | None = None,
    publishing: bool = False,
) -> AuditReport:
    """Audit ``run_id`` (its dashboard entry in ``dashboard``, default the home's).

    ``publishing``: the entry is about to be rebuilt, so it is not checked.

    Raises:
        ConfigError: there is no such run here.
    """
    settings = settings or Settings.from_env()
    audited = await audit_with_server(
        run_id, client=client, settings=settings, dashboard=dashboard, publishing=publishing
    )
    return audited.report


class Audited(NamedTuple):
    """An audit, and whether a Temporal server answered it (with the history or without)."""

    report: AuditReport
    server_answered: bool


async def audit_with_server(
    run_id: str,
    *,
    client: Client | None,
    settings: Settings,
    dashboard: Path | None = None,
    publishing: bool = False,
) -> Audited:
    """:func:`audit_main`, saying whether the server answered (publish needs to know).

    Raises:
        ConfigError: there is no such run here.
    """
    await asyncio.to_thread(pulled, settings, run_id)  # every host's files, to audit here
    plan = read_plan(settings.runs_dir, run_id)
    ledger, skipped, answered = await _ledger(client, settings, run_id, plan)
    board = None if publishing else dashboard or settings.home / "dashboard.json"
    report = audit_run(settings.runs_dir, run_id, ledger, skipped=skipped, dashboard=board)
    return Audited(report, answered)


async def _ledger(
    client: Client | None, settings: Settings, run_id: str, plan: RunPlan
) -> tuple[Ledger | None, str, bool]:
    """The ledger of ``run_id``, or why there is none; whether the server answered.

    ``run_id`` is the run asked for, never whatever its plan.json names.
    """
    attempts, _ = read_attempts(RunPaths.for_run(settings.runs_dir, run_id))
    try:
        client = client or await connect(settings)
        return await read_ledger(client, run_id, plan, attempts), "", True
    except ConfigError as exc:
        return None, f"Temporal cannot be reached ({exc})", False
    except LedgerGone as exc:
        return None, str(exc), True


def print_audit(report: AuditReport) -> None:
    """The findings, one a line, then the notes and a verdict."""
    for finding in report.findings:  # one line each, for grep, even on a narrow terminal
        console.print(plain(finding.line()), markup=False, soft_wrap=True)
    for note in report.notes:
        console.print(plain(f"note: {note}"), markup=False, soft_wrap=True)
    checked = "files only" if report.ledger_skipped else "files and history"
    if report.clean:
        console.print(f"Run {report.run_id} audits clean ({checked}).", markup=False)
    else:
        console.print(
            f"Run {report.run_id}: {len(report.findings)} finding(s) ({checked}). Its files "
            "are not what the run recorded: find out what changed them before publishing.",
            markup=False,
        )


@click.command()
@run_id_argument
@click.option("--json", "as_json", is_flag=True, help="Print the audit as JSON.")
@click.option(
    "--dashboard",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Dashboard JSON file whose entry is checked [$DURABENCH_HOME/dashboard.json].",
)
def audit(run_id: str, as_json: bool, dashboard: Path | None) -> None:
    """Check a finished run's files against its history; exit 0 only when clean."""
    report = run_async(audit_main)(run_id, dashboard=dashboard)
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        print_audit(report)
    if not report.clean:
        sys.exit(1)
