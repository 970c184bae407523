"""The default store: ``$DURABENCH_HOME/runs`` itself, on this machine (or a shared mount)."""

from __future__ import annotations

from pathlib import Path

from durabench.results.store.store import ResultStore
from durabench.settings.paths import RunPaths

__all__ = ["LocalStore"]


class LocalStore(ResultStore):
    """Results in the local runs directory: what is written is already where it is read."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir

    @property
    def url(self) -> str:
        """The runs directory."""
        return str(self.runs_dir)

    def check(self) -> None:
        """Nothing to check: the directory is made when a run first writes to it."""

    def pull(self, paths: RunPaths, *wanted: Path) -> None:
        """Nothing to fetch: the local copy is the store."""

    def pull_index(self, runs_dir: Path) -> None:
        """Nothing to fetch: every run is already in the runs directory."""

    def push(self, paths: RunPaths, *written: Path) -> None:
        """Nothing to send: the local copy is the store."""
