"""durabench's domain: tasks, configs, agents, sandboxes, results. No Temporal in here."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("durabench")
    """The installed distribution's version: pyproject.toml is the one place it is written."""
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"
