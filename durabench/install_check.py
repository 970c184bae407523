"""Refuse to run from an install whose top-level packages another distribution shares.

The repository keeps the design's shape (``workflows``, ``activities``, ``runtime``,
``starter``, ``worker.py`` beside ``durabench``), and they install as top-level names in
site-packages, where PyPI has packages called ``workflows``, ``runtime``, ``starter`` and
``worker``. Two distributions that install one name write into the same files, and pip
says nothing: whichever came last wins, and the other breaks in ways that name neither.
The commands that run work (``run``, ``resume``, ``worker``) check first and refuse with
the fix: an environment of durabench's own (see docs/contributing.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import packages_distributions

from durabench.errors import ConfigError

__all__ = ["DISTRIBUTION", "TOP_LEVEL", "check_install", "shared_names"]

DISTRIBUTION = "durabench"
"""The distribution that owns :data:`TOP_LEVEL`."""

TOP_LEVEL = ("activities", "durabench", "runtime", "starter", "worker", "workflows")
"""Every top-level name durabench installs (a test holds it equal to pyproject.toml's)."""


def shared_names(owners: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Each of :data:`TOP_LEVEL` that other distributions install too, to their names.

    ``owners`` maps a top-level name to the distributions installing it, as
    :func:`importlib.metadata.packages_distributions` does.
    """
    shared = {}
    for name in TOP_LEVEL:
        others = tuple(sorted({d for d in owners.get(name, ()) if d.lower() != DISTRIBUTION}))
        if others:
            shared[name] = others
    return shared


def check_install(owners: Mapping[str, Sequence[str]] | None = None) -> None:
    """Refuse when a top-level name of durabench's is another distribution's too.

    Raises:
        ConfigError: names the shared packages and their distributions, and the fix.
    """
    shared = shared_names(packages_distributions() if owners is None else owners)
    if not shared:
        return
    said = "; ".join(f"{name!r} also by {', '.join(others)}" for name, others in shared.items())
    raise ConfigError(
        f"durabench's top-level packages are installed by other distributions too ({said}): "
        "one overwrote the other's files. Install durabench in an environment of its own "
        "(python -m venv, pipx or uv tool), or `pip uninstall` the other distribution and "
        "reinstall durabench (see docs/contributing.md, 'One namespace')"
    )
