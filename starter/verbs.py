"""A command group that imports a verb's module only when that verb runs.

A verb's module loads Temporal, Docker, pydantic and rich; ``--version``, ``-h`` and a
mistyped verb need none of them. The group lists each verb with its one-line help, kept
beside its module's name (a test holds it equal to the verb's own first line), in
sections by what a person is doing: controlling a run, reading results, running the
machinery (as Inspect's ``log`` group and Harbor's sub-apps group theirs).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import NamedTuple

import click

__all__ = ["SECTIONS", "VERBS", "LazyGroup", "Verb"]


class Verb(NamedTuple):
    """Where a verb lives (``module:attribute``) and the line ``-h`` shows for it."""

    target: str
    short_help: str


class LazyGroup(click.Group):
    """A group whose verbs are imported on first use, not when the group is built."""

    def __init__(self, *args: object, verbs: Mapping[str, Verb], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.verbs = dict(verbs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every verb, loaded or not, in order."""
        return sorted(set(self.commands) | set(self.verbs))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The verb's command, importing its module now."""
        if cmd_name in self.commands or cmd_name not in self.verbs:
            return self.commands.get(cmd_name)
        module, _, attribute = self.verbs[cmd_name].target.partition(":")
        try:
            command = getattr(importlib.import_module(module), attribute)
        except ImportError:  # one of our top-level names may be another package's: say so
            from starter.refusal import check_install

            check_install()
            raise
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.verbs[cmd_name].target} is not a click command")
        self.add_command(command, cmd_name)
        return command

    def verb_help(self, name: str) -> str:
        """The line ``-h`` shows for ``name``, without importing it."""
        if name in self.commands:
            return self.commands[name].get_short_help_str(limit=300)
        return self.verbs[name].short_help

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The verbs and their lines under their sections, none of them imported.

        A verb in no section (one added without a place in :data:`SECTIONS`) is listed
        last, under "Other commands", so ``-h`` never hides one.
        """
        listed = self.list_commands(ctx)
        placed = {name for names in SECTIONS.values() for name in names}
        sections = [
            *SECTIONS.items(),
            ("Other commands", tuple(n for n in listed if n not in placed)),
        ]
        for title, names in sections:
            rows = [(name, self.verb_help(name)) for name in names if name in listed]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


VERBS: Mapping[str, Verb] = {
    "run": Verb(
        "starter.run:run", "Plan a paired run of a suite, wait for approval, run it and report."
    ),
    "approve": Verb("starter.approve:approve", "Approve a run's plan so its pairs start."),
    "reject": Verb(
        "starter.approve:reject", "Reject a run's plan: it ends without starting anything."
    ),
    "pause": Verb(
        "starter.control:pause", "Pause a run: nothing new starts, running attempts finish."
    ),
    "resume": Verb(
        "starter.resume:resume",
        "Resume a run: unpause it and, unless --detach, run a worker here until it ends.",
    ),
    "set-parallel": Verb(
        "starter.control:set_parallel", "Change how many pairs of a run are in flight at once."
    ),
    "cancel": Verb(
        "starter.control:cancel", "Cancel a run: its containers are removed, finished results kept."
    ),
    "status": Verb(
        "starter.status:status",
        "Show a run's progress or results; with no run id, list recent runs.",
    ),
    "report": Verb("starter.report:report", "Print (or write) a finished run's report."),
    "export": Verb(
        "starter.export:export",
        "Print (or write) a finished run's results as flat rows, for pandas and spreadsheets.",
    ),
    "schema": Verb(
        "starter.schema:schema",
        "Print the JSON Schema of results.json (or, with `attempt`, of an attempt's result.json).",
    ),
    "score": Verb(
        "starter.score:score",
        "Grade a finished run again through its benchmark service; no agent runs.",
    ),
    "audit": Verb(
        "starter.audit:audit",
        "Check a finished run's files against its history; exit 0 only when clean.",
    ),
    "publish": Verb(
        "starter.publish:publish",
        "Audit a finished run, then add it to the dashboard file (refused if the audit fails).",
    ),
    "classify": Verb(
        "starter.classify:classify",
        "Classify one attempt from its transcript (JSON lines) and facts.",
    ),
    "sweep": Verb(
        "starter.sweep:sweep",
        "Remove containers whose attempt is no longer running (checked against Temporal).",
    ),
    "accounts": Verb(
        "starter.accounts:accounts",
        "Agent accounts (accounts.toml): their health, and the pool that leases them.",
    ),
    "server": Verb(
        "starter.server:server",
        "Run the embedded Temporal server (SQLite under DURABENCH_HOME, Web UI on :8233).",
    ),
    "init": Verb(
        "starter.init:init",
        "Wait for TEMPORAL_ADDRESS and register durabench's search attributes (idempotent).",
    ),
    "tasks": Verb(
        "starter.tasks:tasks",
        "Work with task directories (CodeScaleBench's or Harbor's task.toml).",
    ),
    "view": Verb(
        "starter.view:view",
        "Serve a viewer of runs on 127.0.0.1: plans, scores, trajectories, verifier output.",
    ),
    "worker": Verb(
        "starter.work:worker",
        "Run a worker here until Ctrl-C or SIGTERM: it carries runs started with --detach.",
    ),
}
"""Each verb's module and its line in ``-h``: a verb is imported only when it runs."""

SECTIONS: Mapping[str, tuple[str, ...]] = {
    "Run control": (
        "run",
        "approve",
        "reject",
        "pause",
        "resume",
        "set-parallel",
        "cancel",
        "status",
    ),
    "Results": ("report", "export", "view", "score", "audit", "publish", "schema", "classify"),
    "Operations": ("worker", "server", "init", "accounts", "tasks", "sweep"),
}
"""``-h``'s sections, each verb in one, in the order a person reaches for them."""
