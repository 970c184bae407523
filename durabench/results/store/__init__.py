"""Where runs' results live: the local runs directory, or an object store shared by hosts.

``DURABENCH_RESULTS_URL`` unset: ``$DURABENCH_HOME/runs`` (:class:`LocalStore`). Set to
``s3://bucket/prefix``: every worker uploads what it writes and every reader fetches what
it reads (:class:`ObjectStore`), so attempts that ran on other machines show up in the
same report. :func:`pull`, :func:`pulled` and :func:`push` are what the rest of durabench calls.

:class:`ObjectStore` is loaded on first use: its clients (fsspec, botocore) cost a client
command that reads a local directory a tenth of its start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from durabench.results.store.local import LocalStore
from durabench.results.store.store import ResultStore
from durabench.settings.paths import RunPaths
from durabench.settings.results_url import SCHEMES, check_results_url
from durabench.settings.values import Settings

if TYPE_CHECKING:
    from durabench.results.store.object_store import ObjectStore

__all__ = [
    "SCHEMES",
    "LocalStore",
    "ObjectStore",
    "ResultStore",
    "check_results_url",
    "open_store",
    "pull",
    "pulled",
    "push",
]


def __getattr__(name: str) -> Any:
    """``ObjectStore``, imported now."""
    if name == "ObjectStore":
        from durabench.results.store.object_store import ObjectStore

        return ObjectStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(settings: Settings) -> ResultStore:
    """The store ``settings`` name: ``results_url``'s object store, else the runs directory."""
    if settings.results_url:
        from durabench.results.store.object_store import ObjectStore

        return ObjectStore(settings.results_url)
    return LocalStore(settings.runs_dir)


def pulled(settings: Settings, run_id: str) -> RunPaths:
    """The run's local paths, every file of it in the store fetched first.

    Raises:
        ConfigError: ``run_id`` is not a valid id.
        ResultStoreError: the object store refused or could not be reached.
    """
    return pull(settings, RunPaths.for_run(settings.runs_dir, run_id))


def pull(settings: Settings, paths: RunPaths, *wanted: Path) -> RunPaths:
    """``paths``, with the store's files at ``wanted`` (the whole run when none) fetched.

    Raises:
        ResultStoreError: the object store refused or could not be reached.
    """
    open_store(settings).pull(paths, *wanted)
    return paths


def push(settings: Settings, paths: RunPaths, *written: Path) -> None:
    """Give the store ``written`` (files or directories of the run; all of it when none).

    Raises:
        ResultStoreError: the object store refused or could not be reached.
    """
    open_store(settings).push(paths, *written)
