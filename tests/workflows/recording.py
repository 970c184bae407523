"""Recording hooks: how tests/histories gets its histories (scripts/record_histories.py).

With ``DURABENCH_RECORD_HISTORIES=DIR`` a test that ran a path worth replaying writes
the workflows' histories to ``DIR/<name>.json``; without it, the hooks do nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from temporalio.client import Client

__all__ = ["RECORD_ENV", "record"]

RECORD_ENV = "DURABENCH_RECORD_HISTORIES"

Workflow = str | tuple[str, str]
"""A workflow id (its latest run), or a workflow id and one run's id."""


async def record(client: Client, names: dict[str, Workflow]) -> None:
    """Write each workflow's history as ``<name>.json`` when recording is asked for."""
    where = os.environ.get(RECORD_ENV)
    if not where:
        return
    for name, workflow in names.items():
        wf_id, run_id = (workflow, None) if isinstance(workflow, str) else workflow
        history = await client.get_workflow_handle(wf_id, run_id=run_id).fetch_history()
        Path(where, f"{name}.json").write_text(history.to_json())
