"""``python -m starter schema``: the JSON Schema of durabench's results files."""

from __future__ import annotations

import json

import click
from pydantic import BaseModel

from durabench.models.results import AttemptResult, RunResult

__all__ = ["schema"]

FILES: dict[str, type[BaseModel]] = {"results": RunResult, "attempt": AttemptResult}
"""What each name describes: a run's ``results.json``, an attempt's ``result.json``."""


@click.command()
@click.argument("of", type=click.Choice(sorted(FILES)), default="results")
def schema(of: str) -> None:
    """Print the JSON Schema of results.json (or, with `attempt`, of an attempt's result.json).

    It is generated from the models durabench writes the files with, so it cannot drift
    from them; ``schema_version`` in each file says which version of it the file follows.
    """
    click.echo(json.dumps(FILES[of].model_json_schema(mode="serialization"), indent=2))
