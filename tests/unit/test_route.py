"""The route printed for a run no worker carries names commands that exist, in an order that works.

Every phase a run can be in gets a route; each command in it is a starter verb that takes
those arguments (checked against the CLI's own parser, not a list kept here), and a waiting
run's route approves before it runs a worker, as ``starter approve`` allows with none.
"""

from __future__ import annotations

import re
import shlex
from typing import get_args

import click
import pytest

from durabench.models.suite_run import RunPhase
from starter.main import cli
from starter.route import no_worker_route


def _commands(route: str) -> list[list[str]]:
    return [shlex.split(c)[3:] for c in re.findall(r"`(python -m starter [^`]+)`", route)]


@pytest.mark.parametrize("phase", [*get_args(RunPhase), None])
def test_every_command_of_the_route_parses(phase: str | None) -> None:
    route = no_worker_route("r-1", phase)
    commands = _commands(route)
    assert commands, route
    for args in commands:
        command = cli.get_command(click.Context(cli), args[0])
        assert command is not None, args
        command.make_context(args[0], args[1:])  # raises on an unknown option or argument


def test_a_waiting_run_is_approved_then_run_here() -> None:
    verbs = [args[0] for args in _commands(no_worker_route("r-1", "awaiting_approval"))]
    assert verbs == ["approve", "resume", "reject"]
    verbs = [args[0] for args in _commands(no_worker_route("r-1", "planning"))]
    assert verbs == ["resume", "reject"]  # an approval before the plan would be ignored
