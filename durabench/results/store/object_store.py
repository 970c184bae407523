"""Results in an object store (``DURABENCH_RESULTS_URL=s3://bucket/prefix``), through fsspec.

A run's files are kept under ``<prefix>/<run_id>/`` with the layout of
:class:`~durabench.settings.paths.RunPaths`. The endpoint and credentials are the standard AWS
ones (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
``AWS_PROFILE``, …), read by botocore in each process: they never enter a workflow's
input, its history, a log line or a results file.

An object whose key would land outside its run's directory (``..`` in it: anyone who can
write to the bucket can plant one) is never written; nor is one no file can be kept at
(:func:`~durabench.results.store.keys.unkeepable`: an object where the run keeps a
directory, one under another object, a name longer than a file system takes), nor one the
local file system refuses. Each is skipped with a warning naming it, and the
rest of the run is read, so one bad key cannot stop every reader's report.

A file counts as unchanged when its size matches and its local modification time equals
the object's: after each transfer the local copy takes the object's time, so files go
over the wire once, in either direction.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import fsspec
import s3fs  # noqa: F401 - fsspec's s3:// filesystem: missing, the s3 extra is (see __init__)
from botocore.exceptions import BotoCoreError, NoCredentialsError

from durabench.errors import ConfigError, ResultStoreError
from durabench.logs import get_logger
from durabench.results.store.keys import indexed_run, unkeepable
from durabench.results.store.store import ResultStore
from durabench.settings.paths import RunPaths
from durabench.settings.results_url import CREDENTIALS_HINT, check_results_url

__all__ = ["ObjectStore"]

log = get_logger("durabench.results.store")


class ObjectStore(ResultStore):
    """Every host's results in one bucket; each process keeps a local copy of what it uses."""

    def __init__(self, url: str) -> None:
        check_results_url(url)
        parts = urlsplit(url)
        self._url = url
        self.bucket = parts.netloc
        self.root = f"{parts.netloc}/{parts.path.strip('/')}".rstrip("/")
        self.fs = _filesystem(parts.scheme)
        self.skipped: list[str] = []
        """Why each object skipped by a pull was not fetched (its key leaves its run)."""

    @property
    def url(self) -> str:
        """The URL as given (it holds no credentials: :func:`check_results_url`)."""
        return self._url

    def check(self) -> None:
        """List the bucket, then write and remove a probe under the prefix.

        Raises:
            ConfigError: no bucket, no credentials, no access, or no store at the endpoint.
        """
        probe = f"{self.root}/.durabench-check-{os.getpid()}"
        try:
            with self._mapped("check"):
                self.fs.ls(self.bucket)
                self.fs.pipe_file(probe, b"durabench can write here\n")
                self.fs.rm_file(probe)
        except ResultStoreError as exc:
            raise ConfigError(str(exc)) from exc.__cause__

    def pull(self, paths: RunPaths, *wanted: Path) -> None:
        """Fetch the objects at ``wanted`` (all if none) the local copy lacks or holds changed."""
        for top in wanted or (paths.root,):
            base = self._key(paths, top.relative_to(paths.root).as_posix())
            with self._mapped(f"read {base}"):
                found = _files_found(self.fs.find(base, detail=True))
                for key, info in found.items():
                    self._fetch(paths, key, info, found)

    def pull_index(self, runs_dir: Path) -> None:
        """Fetch each run's plan and attempt results the local copy lacks or holds changed."""
        with self._mapped(f"read {self.root}"):
            found = _files_found(self.fs.find(self.root, detail=True))
            for key, info in found.items():
                run_id = indexed_run(key.removeprefix(self.root + "/"))
                if run_id is None:
                    continue
                try:
                    paths = RunPaths.for_run(runs_dir, run_id)
                except ConfigError:
                    continue  # not a run's directory: nothing durabench wrote
                self._fetch(paths, key, info, found)

    def _fetch(
        self, paths: RunPaths, key: str, info: dict[str, Any], found: dict[str, Any]
    ) -> None:
        """Fetch ``key`` into the run's copy if it lacks or holds it changed; or skip it."""
        local = self._inside(paths, key)
        if local is None:
            return
        run = self._key(paths, "")
        relative = key.removeprefix(run + "/")
        problem = unkeepable(relative, lambda name: f"{run}/{name}" in found)  # before a look
        if problem is None and _same(local, info):
            return
        if problem is None:
            try:
                _download(self.fs, key, local, info)
                return
            except _LocalError as exc:
                problem = str(exc)
        self._skip(key, f"object {key} in {self.url} cannot be kept at {local}: {problem}")

    def push(self, paths: RunPaths, *written: Path) -> None:
        """Send the files at ``written`` (all if none) that the store lacks or holds changed."""
        for top in written or (paths.root,):
            base = self._key(paths, top.relative_to(paths.root).as_posix())
            with self._mapped(f"write {base}"):
                held = self.fs.find(base, detail=True) if top.exists() else {}
                for local in _files(top):
                    key = self._key(paths, local.relative_to(paths.root).as_posix())
                    if not _same(local, held.get(key)):
                        self._upload(local, key)

    def _upload(self, local: Path, key: str) -> None:
        try:
            self.fs.put_file(str(local), key)
        except FileNotFoundError:
            if local.exists():
                raise
            return  # a temporary file replaced while listing: its final name is sent
        _set_mtime(local, self.fs.info(key))

    def _key(self, paths: RunPaths, relative: str) -> str:
        key = f"{self.root}/{paths.root.name}"
        return f"{key}/{relative}" if relative and relative != "." else key

    def _inside(self, paths: RunPaths, key: str) -> Path | None:
        """:meth:`_local`, or ``None`` for a key that leaves the run: skipped, and named."""
        try:
            return self._local(paths, key)
        except ResultStoreError as exc:
            self._skip(key, str(exc))
            return None

    def _skip(self, key: str, problem: str) -> None:
        why = f"{problem}; skipped, the rest of the run is read (remove it from the store)"
        self.skipped.append(why)
        log.warning("object skipped", key=key, why=why)

    def _local(self, paths: RunPaths, key: str) -> Path:
        """The local path of ``key``: inside the run's directory, or refused."""
        relative = key.removeprefix(self._key(paths, "") + "/")
        local = paths.root / relative
        if relative == key or not local.resolve().is_relative_to(paths.root.resolve()):
            raise ResultStoreError(
                f"object {key} in {self.url} would be written outside {paths.root}; remove it "
                "from the store"
            )
        return local

    @contextmanager
    def _mapped(self, doing: str) -> Iterator[None]:
        """Translate the store's errors into ones that say what to do."""
        try:
            yield
        except NoCredentialsError as exc:
            raise ResultStoreError(
                f"no credentials for {self.url} ({doing}): {CREDENTIALS_HINT}"
            ) from exc
        except FileNotFoundError as exc:
            raise ResultStoreError(
                f"{self.url} ({doing}): {exc}. Create the bucket {self.bucket!r} (e.g. `aws "
                f"s3 mb s3://{self.bucket}`) or fix DURABENCH_RESULTS_URL"
            ) from exc
        except PermissionError as exc:
            raise ResultStoreError(
                f"{self.url} refused access ({doing}): {exc}. The credentials need to list, "
                f"read, write and delete under it; or {CREDENTIALS_HINT} for ones that may"
            ) from exc
        except (BotoCoreError, OSError) as exc:
            endpoint = os.environ.get("AWS_ENDPOINT_URL", "AWS's own")
            raise ResultStoreError(
                f"cannot reach the object store of {self.url} ({doing}) at endpoint "
                f"{endpoint}: {exc}. Start it, or set AWS_ENDPOINT_URL to where it listens"
            ) from exc


_FILESYSTEMS: dict[tuple[str, ...], Any] = {}
"""Filesystems made in this process, kept for its life: one dropped would close its
session from whatever event loop runs when it is collected (a workflow's, in a worker)."""


def _filesystem(scheme: str) -> Any:
    """This process's filesystem for ``scheme`` under the AWS variables as they are now.

    No listing cache: other hosts write to the same prefix.
    """
    key = (scheme, *sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("AWS_")))
    if key not in _FILESYSTEMS:
        _FILESYSTEMS[key] = fsspec.filesystem(
            scheme, skip_instance_cache=True, use_listings_cache=False
        )
    return _FILESYSTEMS[key]


def _files(top: Path) -> Iterator[Path]:
    """The files at ``top``: itself if a file, else every file below it."""
    if top.is_file():
        yield top
    elif top.is_dir():
        yield from sorted(p for p in top.rglob("*") if p.is_file() and not p.is_symlink())


def _modified(info: dict[str, Any]) -> float | None:
    when = info.get("LastModified")
    return when.timestamp() if isinstance(when, datetime) else None


def _same(local: Path, info: dict[str, Any] | None) -> bool:
    """Whether ``local`` and the object of ``info`` hold the same file (see the module)."""
    if info is None or not local.is_file():
        return False
    stat = local.stat()
    modified = _modified(info)
    return (
        modified is not None
        and stat.st_size == info.get("size")
        and int(stat.st_mtime) == int(modified)
    )


def _set_mtime(local: Path, info: dict[str, Any]) -> None:
    modified = _modified(info)
    if modified is not None:
        os.utime(local, (modified, modified))


class _LocalError(Exception):
    """The local copy cannot hold an object (a name too long, a directory in the way)."""


def _download(fs: Any, key: str, local: Path, info: dict[str, Any]) -> None:
    """Fetch ``key`` to ``local`` atomically: a reader never sees half a file.

    Raises:
        _LocalError: the local file system cannot hold it there (the store was reached).
    """
    try:
        local.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=local.parent, prefix=".part.")
        os.close(fd)
    except OSError as exc:
        raise _LocalError(exc.strerror or str(exc)) from exc
    try:
        fs.get_file(key, tmp)
        _set_mtime(Path(tmp), info)
        try:
            os.replace(tmp, local)
        except OSError as exc:
            raise _LocalError(exc.strerror or str(exc)) from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _files_found(found: dict[str, Any]) -> dict[str, Any]:
    """The objects (not the directory entries) of a ``find``, sorted by key."""
    return {k: found[k] for k in sorted(found) if found[k].get("type") == "file"}
