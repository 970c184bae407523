"""A command's error, and a plain line, as one line of data (no rich: ``--help`` stays light).

Text from a task, an agent or a service reaches the terminal through
:func:`starter.console.shown` (inside rich markup), :func:`plain` (a line printed as it
is) or :class:`Refusal` (a command's error).
"""

from __future__ import annotations

import click

from durabench.text_safety import one_line

__all__ = ["Refusal", "check_install", "plain"]


def plain(text: str) -> str:
    """``text`` for a line printed without markup (``click.echo``, ``markup=False``)."""
    return one_line(text)


class Refusal(click.ClickException):
    """A command's error, printed by click as ``Error: <one line>``.

    Its message may quote a task's, a service's or a file's words; click prints a
    message as it is, so this one writes their controls and line breaks out.
    """

    def format_message(self) -> str:
        """The message on one line (:func:`plain`)."""
        return plain(self.message)


def check_install() -> None:
    """:func:`durabench.install_check.check_install`, refused as a command's error.

    Raises:
        Refusal: another distribution installs one of durabench's top-level names.
    """
    from durabench.errors import ConfigError
    from durabench.install_check import check_install as check

    try:
        check()
    except ConfigError as exc:
        raise Refusal(str(exc)) from exc
