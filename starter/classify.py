"""``python -m starter classify TRANSCRIPT ...``: the exit-class verdict on one transcript."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import click

from durabench.agents.transcript import read_events
from durabench.classify import classify as classify_attempt
from durabench.gateway import read_ledger
from durabench.models.verdict import ClassifyInput, TranscriptFormat
from durabench.prices import PriceTable, load_prices
from durabench.settings.numbers import MAX_NUMBER
from durabench.settings.values import Settings
from starter.console import console, shown
from starter.options import float_range, int_range

__all__ = ["classify"]


@click.command()
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--agent", required=True, type=click.Choice(get_args(TranscriptFormat)))
@click.option("--requested-model", required=True, help="The model the run asked for.")
@click.option("--exit-code", type=int_range(min=-MAX_NUMBER), required=True)
@click.option("--wall-seconds", type=float_range(min=0), required=True)
@click.option("--files-changed", type=int_range(min=0), required=True)
@click.option("--timed-out", is_flag=True, help="The time limit killed the agent.")
@click.option("--build-failed", is_flag=True, help="The workspace does not build.")
@click.option(
    "--ledger",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The attempt's gateway ledger (gateway.jsonl): what the model API answered, and "
    "its tokens, costed at today's prices (built in and DURABENCH_HOME/prices.toml). "
    "Without it no class is infra: the transcript alone is the agent's word.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def classify(
    transcript: Path,
    agent: TranscriptFormat,
    requested_model: str,
    exit_code: int,
    wall_seconds: float,
    files_changed: int,
    timed_out: bool,
    build_failed: bool,
    ledger: Path | None,
    as_json: bool,
) -> None:
    """Classify one attempt from its transcript (JSON lines) and facts."""
    events = read_events(transcript.read_text(errors="replace").splitlines())
    verdict = classify_attempt(
        ClassifyInput(
            events=tuple(events),
            transcript_format=agent,
            requested_model=requested_model,
            exit_code=exit_code,
            timed_out=timed_out,
            wall_seconds=wall_seconds,
            files_changed=files_changed,
            build_failed=build_failed,
            metered=read_ledger(ledger) if ledger else None,
            model_via_gateway=ledger is not None,
            prices=load_prices(Settings.from_env().home) if ledger else PriceTable(),
        )
    )
    if as_json:
        click.echo(verdict.model_dump_json(indent=2))
        return
    signals = [name for name, on in verdict.signals.model_dump().items() if on]
    cost = "-" if verdict.cost_usd is None else f"${verdict.cost_usd:.4f}"
    cost = f"unpriced ({verdict.unpriced_model})" if verdict.unpriced_model else cost
    console.print(f"[bold]{verdict.exit_class}[/]: {shown(verdict.reason)}")
    console.print(
        shown(
            f"served model: {verdict.served_model or 'not named'}; cost: {cost}; "
            f"tokens in/out: {verdict.tokens.input}/{verdict.tokens.output}"
        )
    )
    console.print(
        f"signals: {', '.join(signals) or 'none'}; classifier v{verdict.classifier_version}"
    )
    if verdict.last_message:
        console.print(f"last message: {shown(verdict.last_message[:300])}")
