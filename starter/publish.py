"""``python -m starter publish <run-id>``: audit the run, then add it to the dashboard file."""

from __future__ import annotations

from pathlib import Path

import click
from temporalio.client import Client

from durabench.results.dashboard import Dashboard
from durabench.results.dashboard import publish as publish_run
from durabench.settings.values import Settings
from starter.audit import audit_with_server, print_audit
from starter.console import console
from starter.options import run_async, run_id_argument

__all__ = ["publish", "publish_main"]


async def publish_main(
    run_id: str,
    *,
    dashboard: Path | None = None,
    force: bool = False,
    client: Client | None = None,
    settings: Settings | None = None,
) -> Dashboard:
    """Audit ``run_id``; publish it if clean (or ``force``, which the entry records).

    An audit of the files only is clean enough only where no Temporal server is named
    (``TEMPORAL_ADDRESS``) and none answers: otherwise the run's history should have been
    read, and it takes ``force``.

    Raises:
        ConfigError: no such run, or it is refused (its audit failed, or checked the files
            only while a server is named or answers, without ``force``).
    """
    settings = settings or Settings.from_env()
    target = dashboard or settings.home / "dashboard.json"
    audited = await audit_with_server(run_id, client=client, settings=settings, publishing=True)
    report = audited.report
    if not report.clean or report.notes or report.ledger_skipped:
        print_audit(report)
    # A server that answers, or one named, may hold the history a files-only audit missed.
    expected = audited.server_answered or settings.temporal_address is not None
    # The audit fetched the run from the store and checked these very files: publish them,
    # not whatever the store holds a moment later.
    built = publish_run(
        settings.runs_dir, target, run_id, report, force=force, history_expected=expected
    )
    forced = f", forced past {len(report.findings)} finding(s)" if report.findings else ""
    console.print(f"Published {run_id}{forced}: {target} now holds {len(built.runs)} run(s).")
    return built


@click.command()
@run_id_argument
@click.option(
    "--dashboard",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Dashboard JSON file [$DURABENCH_HOME/dashboard.json].",
)
@click.option(
    "--force",
    is_flag=True,
    help="Publish even if the audit finds problems, or could not read the run's history "
    "(recorded in the entry).",
)
def publish(run_id: str, dashboard: Path | None, force: bool) -> None:
    """Audit a finished run, then add it to the dashboard file (refused if the audit fails)."""
    run_async(publish_main)(run_id, dashboard=dashboard, force=force)
