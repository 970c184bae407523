"""``python -m starter export <run-id>``: a finished run's results as CSV or JSON lines."""

from __future__ import annotations

from pathlib import Path

import click

from durabench.errors import DurabenchError
from durabench.results.export import attempt_rows, pair_rows, to_csv, to_jsonl
from durabench.results.files import load_results
from durabench.results.store import pulled
from durabench.settings.values import Settings
from starter.console import emit
from starter.options import run_id_argument
from starter.refusal import Refusal

__all__ = ["export", "export_text"]


def export_text(settings: Settings, run_id: str, fmt: str, level: str) -> str:
    """The rows of ``run_id`` at ``level`` (attempt or pair) in ``fmt`` (csv or jsonl).

    Raises:
        ConfigError: the run has no results, or a setting is bad.
    """
    result = load_results(pulled(settings, run_id))
    rows = attempt_rows(result) if level == "attempt" else pair_rows(result)
    return to_csv(rows) if fmt == "csv" else to_jsonl(rows)


@click.command()
@run_id_argument
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl"]),
    default="csv",
    show_default=True,
    help="CSV (a spreadsheet) or JSON lines.",
)
@click.option(
    "--level",
    type=click.Choice(["attempt", "pair"]),
    default="attempt",
    show_default=True,
    help="A row per attempt (every field of its result.json), or per task (lanes side by side).",
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE.")
def export(run_id: str, fmt: str, level: str, out: Path | None) -> None:
    """Print (or write) a finished run's results as flat rows, for pandas and spreadsheets.

    In CSV, a text cell that a spreadsheet would run as a formula (starting with =, +, -,
    @, tab or CR) is written with a leading ' (OWASP's CSV-injection advice).
    """
    try:
        text = export_text(Settings.from_env(), run_id, fmt, level)
    except DurabenchError as exc:  # no such results, or the store could not be read
        raise Refusal(str(exc)) from exc
    emit(text, out)
