"""Every option of every verb says what it does in ``--help``.

Enumerated over the registered verbs (groups included, with their subcommands): an option
listed with no words beside it leaves the reader to guess.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from starter.main import cli


def _commands(
    group: click.Group, ctx: click.Context, path: str
) -> Iterator[tuple[str, click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        yield f"{path} {name}", command
        if isinstance(command, click.Group):
            yield from _commands(command, click.Context(command, parent=ctx), f"{path} {name}")


def test_every_option_of_every_verb_has_help() -> None:
    ctx = click.Context(cli)
    verbs = list(_commands(cli, ctx, "starter"))
    assert len(verbs) > 15  # every verb was found, lazily loaded ones included
    missing = [
        f"{path} {'/'.join(param.opts)}"
        for path, command in verbs
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert missing == [], missing
