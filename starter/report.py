"""``python -m starter report <run-id>``: the run's report, rendered again."""

from __future__ import annotations

from pathlib import Path

import click

from durabench.errors import ConfigError, DurabenchError
from durabench.results.files import load_results
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.results.store import pulled
from durabench.settings.values import Settings
from starter.console import emit
from starter.options import float_range, run_id_argument
from starter.refusal import Refusal

__all__ = ["report", "report_text"]


def _settings() -> Settings:
    try:
        return Settings.from_env()
    except ConfigError as exc:
        raise Refusal(str(exc)) from exc


def report_text(settings: Settings, run_id: str, fmt: str, threshold: float | None) -> str:
    """The report of ``run_id`` in ``fmt`` (md, json or html).

    Raises:
        ConfigError: the run has no results.
    """
    paths = pulled(settings, run_id)
    result = load_results(paths, threshold)
    if result.scorecard is None:  # load_results always scores; kept for the type checker
        raise ConfigError(f"run {run_id} has no scorecard")
    if fmt == "json":
        return result.model_dump_json(indent=2) + "\n"
    if fmt == "html":
        return render_html(result, result.scorecard, paths.attempt_trajectories())
    return render_markdown(result, result.scorecard)


@click.command()
@run_id_argument
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html"]),
    default="md",
    show_default=True,
    help="Markdown, the results as JSON, or a standalone HTML page.",
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write to FILE.")
@click.option(
    "--pass-threshold",
    type=float_range(0.0, 1.0),
    default=None,
    help="Rescore: a lane passes a task at this mean reward [DURABENCH_PASS_THRESHOLD, 1.0].",
)
def report(run_id: str, fmt: str, out: Path | None, pass_threshold: float | None) -> None:
    """Print (or write) a finished run's report."""
    try:
        text = report_text(_settings(), run_id, fmt, pass_threshold)
    except DurabenchError as exc:  # no such results, or the store could not be read
        raise Refusal(str(exc)) from exc
    emit(text, out)
