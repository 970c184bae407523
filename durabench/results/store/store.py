"""The one interface to where runs' results live, whichever machine wrote them.

Every process works on a local copy of a run's directory
(:class:`~durabench.settings.paths.RunPaths` under ``$DURABENCH_HOME/runs``): the file
formats and their readers stay as they are. A store says how that copy meets everyone
else's: :meth:`ResultStore.push` after writing, :meth:`ResultStore.pull` before reading.
With no ``DURABENCH_RESULTS_URL`` the local
directory *is* the store (both are no-ops); with one, an object store holds every host's
files, so a worker on another machine adds its attempts to the same report.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from durabench.settings.paths import RunPaths

__all__ = ["ResultStore"]


class ResultStore(ABC):
    """Where every run's results are kept, as seen from this process."""

    @property
    @abstractmethod
    def url(self) -> str:
        """Where the results are, for messages (no credentials: none ever go in it)."""

    @abstractmethod
    def check(self) -> None:
        """Fail now, with the fix, if results could not be written or read later.

        Called at worker start and by ``starter run``, before anything runs.

        Raises:
            ConfigError: the store cannot be reached, its bucket is missing, or there are
                no credentials, or they may not write there; the message says what to do.
        """

    @abstractmethod
    def pull(self, paths: RunPaths, *wanted: Path) -> None:
        """Bring the store's files of the run into the local copy at ``paths.root``.

        ``wanted`` are files or directories inside ``paths.root``; none means the whole
        run. Files the local copy holds unchanged are not fetched again.

        Raises:
            ResultStoreError: the store refused or could not be reached (the message says why).
        """

    @abstractmethod
    def pull_index(self, runs_dir: Path) -> None:
        """Bring every run's ``plan.json`` and its attempts' ``result.json`` into ``runs_dir``.

        What readers of earlier runs (gap-fill counterparts, reruns, the dashboard) need
        to find runs made on any host, without their transcripts.

        Raises:
            ResultStoreError: the store refused or could not be reached (the message says why).
        """

    @abstractmethod
    def push(self, paths: RunPaths, *written: Path) -> None:
        """Give the store the local files at ``written``, so every host reads them.

        ``written`` are files or directories inside ``paths.root``; none means the whole
        run. Files the store already holds unchanged are not sent again.

        Raises:
            ResultStoreError: the store refused or could not be reached (the message says why).
        """
