"""``--version`` and ``-h`` answer without loading the machinery a command needs.

Every verb's module pulls in Temporal, Docker, pydantic models and rich; a newcomer's
first ``python -m starter --version`` or ``python worker.py -h`` should not wait for them.
Checked by what the interpreter imported (``-X importtime``), never by a clock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

HEAVY = ("temporalio", "docker", "rich", "pydantic", "structlog", "httpx", "activities")
"""Packages none of these answers needs."""


def _imported(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    command = [sys.executable, "-X", "importtime", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True)
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return proc, {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "args",
    [
        ("-m", "starter", "--version"),
        ("-m", "starter", "-h"),
        ("worker.py", "--version"),
        ("worker.py", "-h"),
    ],
)
def test_version_and_help_import_none_of_the_machinery(args: tuple[str, ...]) -> None:
    proc, top = _imported(*args)
    assert proc.stdout.strip()
    assert not top & set(HEAVY), sorted(top & set(HEAVY))


def test_the_help_lists_every_verb_with_its_own_first_line() -> None:
    """The listing is written without importing the verbs: it must say what they say."""
    from starter.main import cli

    listed = cli.list_commands(None)  # type: ignore[arg-type]
    assert "run" in listed and "worker" in listed
    for name in listed:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None
        assert cli.verb_help(name) == command.get_short_help_str(limit=300), name


CONTAINER_SIDE = ("activities", "docker", "httpx", "fsspec", "botocore")
"""What only a worker needs: activities, the Docker SDK, HTTP clients, object stores."""


@pytest.mark.parametrize(
    "module",
    ["runtime.client", "workflows.search_attributes", "durabench.results.store"],
)
def test_what_a_client_command_imports_loads_no_worker_machinery(module: str) -> None:
    """``status``, ``approve`` and the like connect and query; they run no activity.

    Connecting (``runtime.client``) once loaded every workflow module through the search
    attributes, and with them every activity, Docker and httpx; reading results loaded
    the object-store client even for a local directory.
    """
    proc, top = _imported("-c", f"import {module}; print('ok')")
    assert proc.stdout.strip() == "ok"
    assert not top & set(CONTAINER_SIDE), sorted(top & set(CONTAINER_SIDE))


def test_a_workflow_id_costs_no_temporal() -> None:
    """A client names a run by ``workflows.ids``; the workflow modules stay unloaded."""
    proc, top = _imported("-c", "from workflows.ids import run_workflow_id; print('ok')")
    assert proc.stdout.strip() == "ok"
    assert "temporalio" not in top and not top & set(CONTAINER_SIDE)


def test_status_loads_no_activity() -> None:
    """``status <id>`` describes a run and asks it two queries: no activity, no Docker."""
    proc, top = _imported("-c", "import starter.status; print('ok')")
    assert proc.stdout.strip() == "ok"
    assert not top & set(CONTAINER_SIDE), sorted(top & set(CONTAINER_SIDE))
