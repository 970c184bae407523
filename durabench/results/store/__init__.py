"""Where runs' results live: the local runs directory, or an object store shared by hosts.

``DURABENCH_RESULTS_URL`` unset: ``$DURABENCH_HOME/runs`` (:class:`LocalStore`). Set to
``s3://bucket/prefix``: every worker uploads what it writes and every reader fetches what
it reads (:class:`ObjectStore`), so attempts that ran on other machines show up in the
same report. :func:`pull`, :func:`pulled` and :func:`push` are what the rest of durabench calls.

:class:`ObjectStore` is loaded on first use: its clients (fsspec, botocore) cost a client
command that reads a local directory a tenth of its start-up, and they are an extra
(``durabench[s3]``) that a base install lacks: then the store is refused with that fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from durabench.errors import ConfigError
from durabench.results.store.local import LocalStore
from durabench.results.store.store import ResultStore
from durabench.settings.paths import RunPaths
from durabench.settings.results_url import SCHEMES, check_results_url
from durabench.settings.values import Settings

if TYPE_CHECKING:
    from durabench.results.store.object_store import ObjectStore

__all__ = [
    "S3_EXTRA_HINT",
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


S3_EXTRA_HINT = (
    "DURABENCH_RESULTS_URL=s3://... needs the s3 extra (fsspec, s3fs, botocore): "
    "pip install 'durabench[s3]', or unset DURABENCH_RESULTS_URL to keep results in "
    "$DURABENCH_HOME/runs"
)
"""What a user is told when the object store's clients are not installed."""


def _object_store() -> type[ObjectStore]:
    """:class:`ObjectStore`, imported now.

    Raises:
        ConfigError: the ``s3`` extra is not installed (the message says how to add it).
    """
    try:
        from durabench.results.store.object_store import ObjectStore
    except ImportError as exc:  # a base install: fsspec, s3fs or botocore is missing
        raise ConfigError(f"{S3_EXTRA_HINT} ({exc})") from exc
    return ObjectStore


def __getattr__(name: str) -> Any:
    """``ObjectStore``, imported now."""
    if name == "ObjectStore":
        return _object_store()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(settings: Settings) -> ResultStore:
    """The store ``settings`` name: ``results_url``'s object store, else the runs directory.

    Raises:
        ConfigError: ``results_url`` is set and the ``s3`` extra is not installed.
    """
    if settings.results_url:
        return _object_store()(settings.results_url)
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
