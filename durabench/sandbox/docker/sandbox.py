"""The Docker backend: one container per attempt, through the ``docker`` SDK.

The container idles on ``sleep infinity`` and every phase runs with ``exec``, so agent and
verifier share it. Its name is deterministic: starting again finds it (re-attach). It is
hardened as its spec says: every capability dropped but the kept few, no new privileges,
memory, CPU and process limits, no network unless the agent needs one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import suppress
from http import HTTPStatus
from pathlib import Path, PurePosixPath
from typing import Any, cast

import docker
import docker.errors
import requests
from docker.models import containers as docker_containers
from docker.models.containers import Container
from docker.types import DriverConfig, Mount
from docker.utils.socket import demux_adaptor, frames_iter

from durabench.errors import FileTooLarge, SandboxError, SandboxGone
from durabench.sandbox.backend_registry import sandbox_backend
from durabench.sandbox.base import READ_BYTES, ExecResult, Sandbox, SandboxSpec
from durabench.sandbox.docker.archive import (
    ArchiveStream,
    open_archive,
    read_one,
    read_tree_limited,
)
from durabench.sandbox.docker.cgroup_count import cgroup_tasks, local_daemon
from durabench.sandbox.docker.errors import map_docker_errors, shared_docker_client
from durabench.sandbox.docker.host_read import host_tree
from durabench.sandbox.docker.restart import restart_keeping
from durabench.sandbox.docker.threads import in_thread
from durabench.sandbox.limits import (
    DEFAULT_LIMITS,
    EXEC_OUTPUT_BYTES,
    OutputTail,
    ReadLimits,
    TreeRead,
    human_bytes,
)
from durabench.sandbox.tarball import pack

__all__ = ["DockerSandbox"]

_TIMEOUT_EXIT_CODES = (124, 137)
_KILL_GRACE_S = 5
_TAR_SLACK = 64 << 10
"""Tar headers and padding around one file's bytes."""
_LIST_TIMEOUT_S = 60
"""How long listing the directories at the path limit may take."""


def _close_socket(sock: Any) -> None:
    """Close an exec's hijacked connection at once (its response and the socket itself)."""
    response = getattr(sock, "_response", None)
    raw = getattr(sock, "_sock", sock)
    with suppress(OSError, ValueError):  # parts already shut by the daemon's end of stream
        sock.close()
    with suppress(OSError, ValueError):
        raw.close()
    if response is not None:
        with suppress(OSError, ValueError):
            response.close()


def _memory_volume(path: str, size_mb: int) -> Mount:
    """A size-limited tmpfs as an anonymous volume at ``path``, removed with the container.

    Not ``--tmpfs``: Docker's archive API (how files are read out) cannot see a tmpfs
    mount, but sees a volume, and a local volume can be a tmpfs. It is ``nodev`` and
    ``nosuid``, here and where the worker reads it on the host: a device node or a
    setuid file in it is inert.
    """
    options = {"type": "tmpfs", "device": "tmpfs", "o": f"size={size_mb}m,mode=0755,nodev,nosuid"}
    return Mount(
        target=path, source=None, type="volume", driver_config=DriverConfig("local", options)
    )


_STOPPING_S = 5
"""How long a container found running may take to stop when its keeper was killed."""
_OWN_THREADS = 2
"""The container's own threads: its init (``docker-init``) and its keeper (``sleep``)."""


@sandbox_backend("docker")
class DockerSandbox(Sandbox):
    """A Docker container as a sandbox."""

    def __init__(self, spec: SandboxSpec, client: docker.DockerClient | None = None) -> None:
        super().__init__(spec)
        self._client = client
        self._container: Container | None = None

    @property
    def client(self) -> docker.DockerClient:
        """The Docker client: the one given, else the process's shared one."""
        if self._client is None:
            self._client = shared_docker_client()
        return self._client

    def _find(self) -> Container | None:
        try:
            return self.client.containers.get(self.spec.name)
        except docker.errors.NotFound:
            return None

    def _run_args(self) -> dict[str, Any]:
        return {
            "image": self._image_to_start(),
            "entrypoint": ["sleep", "infinity"],
            "command": [],
            "name": self.spec.name,
            "labels": self.spec.labels,
            "detach": True,
            "init": True,
            "network_mode": self.spec.network,
            "mem_limit": f"{self.spec.memory_mb}m",
            "nano_cpus": int(self.spec.cpus * 1e9),
            "pids_limit": self.spec.pids_limit,
            "cap_drop": ["ALL"],
            "cap_add": list(self.spec.cap_add),
            "security_opt": ["no-new-privileges:true"] if self.spec.no_new_privileges else [],
            "volumes": {h: {"bind": c, "mode": "rw"} for h, c in self.spec.mounts.items()},
            "mounts": [_memory_volume(p, mb) for p, mb in self.spec.tmpfs.items()],
            "storage_opt": {"size": f"{self.spec.disk_gb}G"} if self.spec.disk_gb else None,
        }

    def _create_and_start(self) -> Container | None:
        """Create and start in two daemon calls; None when the name is taken already.

        ``containers.run`` looks the container up again after creating it, and a lookup
        before creating costs a call on every fresh attempt: a taken name (a re-attach)
        is learnt from the create's conflict instead.
        """
        api = self.client.api
        args = self._run_args()
        args.pop("detach")
        create = docker_containers._create_container_args(  # type: ignore[attr-defined]
            {**args, "version": api.api_version}
        )
        try:
            made = api.create_container(**create)
        except docker.errors.ImageNotFound:  # not here: ``run`` pulls it
            return cast(Container, self.client.containers.run(**self._run_args()))
        except docker.errors.APIError as exc:
            if exc.status_code == HTTPStatus.CONFLICT:
                return None
            raise
        api.start(made["Id"])
        return self.client.containers.prepare_model({"Id": made["Id"]})

    def _start_sync(self) -> str:
        with map_docker_errors(f"starting container {self.spec.name}"):
            container = self._create_and_start()
            if container is None:
                container = self._find()
                if container is None:  # removed between the conflict and the lookup
                    container = self._create_and_start()
                elif container.status != "running":
                    container.start()
            if container is None:
                raise SandboxError(f"container {self.spec.name} could not be created")
            self._container = container
            return str(container.id)

    async def start(self) -> str:
        """Start the container, or re-attach to one of the same name."""
        return await in_thread(self._start_sync)

    def _container_or_raise(self) -> Container:
        if self._container is None:
            self._container = self._find()
        if self._container is None:
            raise SandboxGone(f"container {self.spec.name} is gone; the attempt must start over")
        return self._container

    def _stop_sync(self, delete: bool) -> None:
        api = self.client.api
        with map_docker_errors(f"removing container {self.spec.name}"):
            try:  # by name, no lookup first: a missing container is fine
                if delete:
                    api.remove_container(self.spec.name, force=True, v=True)  # its /logs too
                else:
                    api.stop(self.spec.name, timeout=_KILL_GRACE_S)
            except docker.errors.NotFound:
                pass
            self._container = None

    async def stop(self, delete: bool = True) -> None:
        """Stop, and remove when ``delete``; a missing container is fine."""
        await in_thread(self._stop_sync, delete)

    def _image_id_sync(self) -> str:
        with map_docker_errors(f"finding the container {self.spec.name}"):
            container = self._container_or_raise()
            if "Image" not in container.attrs:  # made by this handle: no inspect data yet
                container.reload()
        return str(container.attrs["Image"])

    async def image_id(self) -> str | None:
        """The image id the container was created from (its inspect data's ``Image``)."""
        return await in_thread(self._image_id_sync)

    def _cgroup_tasks_sync(self) -> int | None:
        """The container's tasks from its cgroup, when the daemon is on this host."""
        if not local_daemon(self.client.api.base_url):
            return None
        with map_docker_errors(f"finding the container {self.spec.name}"):
            container = self._container_or_raise()
        return cgroup_tasks(str(container.id), container.attrs)

    def _threads_sync(self) -> int:
        """The container's threads: its cgroup's count, else the daemon's ``ps``.

        The cgroup's count also holds zombies, which ``ps`` leaves out: a count that
        decides whether the reaper runs may be too high (it runs for nothing), never low.
        """
        if (counted := self._cgroup_tasks_sync()) is not None:
            return counted
        with map_docker_errors(f"counting the processes of {self.spec.name}"):
            try:  # the daemon's ps over the container's cgroup: one row a thread
                top = self.client.api.top(self.spec.name, ps_args="-L -o pid,lwp")
            except docker.errors.NotFound:
                raise SandboxGone(
                    f"container {self.spec.name} is gone; the attempt must start over"
                ) from None
        return len(top.get("Processes") or [])

    def _slots_left_sync(self) -> int | None:
        if not self.spec.pids_limit:
            return None
        return self.spec.pids_limit - self._threads_sync()

    async def others_running(self) -> int:
        """The container's threads, as the host counts them, less its init and keeper.

        Both have one thread, and the container stops when the keeper ends (its init
        exits with it): while it runs, two of the tasks counted are theirs.
        """
        return await in_thread(self._threads_sync) - _OWN_THREADS

    async def process_slots_left(self) -> int | None:
        """The pids limit less the container's threads, as the host counts them.

        The cgroup's count is the one the limit holds; ``docker top`` (a daemon on
        another host) takes a few ms; ``stats`` waits a second for its next sample.
        """
        return await in_thread(self._slots_left_sync)

    def _stopped_sync(self) -> str | None:
        api = self.client.api
        with map_docker_errors(f"inspecting container {self.spec.name}"):
            try:
                state = api.inspect_container(self.spec.name)["State"]
                if state.get("Running"):  # a container whose keeper was just killed: ending
                    with suppress(requests.exceptions.RequestException):
                        api.wait(self.spec.name, timeout=_STOPPING_S)
                    state = api.inspect_container(self.spec.name)["State"]
            except docker.errors.NotFound:
                return None
        if state.get("Running") or state.get("Restarting"):
            return None
        oom = ", out of memory" if state.get("OOMKilled") else ""
        return f"exited with code {state.get('ExitCode')}{oom} at {state.get('FinishedAt')}"

    async def stopped_by_itself(self) -> str | None:
        """The daemon's record of a container that is no longer running (still present)."""
        return await in_thread(self._stopped_sync)

    def _restart_sync(self) -> None:
        with map_docker_errors(f"restarting container {self.spec.name} from outside"):
            try:
                restart_keeping(self.client.api, self.spec.name, self.spec.tmpfs)
            except docker.errors.NotFound:
                raise SandboxGone(
                    f"container {self.spec.name} is gone; the attempt must start over"
                ) from None
            self._container = None

    async def restart(self) -> None:
        """Restart from outside (no exec): every process ends; files and ``/logs`` stay.

        See :mod:`durabench.sandbox.docker.restart`.
        """
        await in_thread(self._restart_sync)

    def _exec_sync(
        self,
        cmd: list[str],
        cwd: str | None,
        env: Mapping[str, str] | None,
        user: str | None,
        timeout_s: float | None,
        max_output: int = EXEC_OUTPUT_BYTES,
    ) -> ExecResult:
        container = self._container_or_raise()
        if timeout_s is not None:
            cmd = ["timeout", f"--kill-after={_KILL_GRACE_S}", f"{timeout_s:g}", *cmd]
        api = self.client.api
        out, err = OutputTail(max_output), OutputTail(max_output)
        began = time.monotonic()
        with map_docker_errors(f"running {cmd[0]!r} in {self.spec.name}"):
            made = api.exec_create(
                container.id, cmd, environment=dict(env or {}), workdir=cwd, user=user or ""
            )
            sock = api.exec_start(made["Id"], socket=True)
            try:
                frames = frames_iter(sock, tty=False)  # type: ignore[no-untyped-call]
                for o, e in (demux_adaptor(*frame) for frame in frames):
                    out.add(o)
                    err.add(e)
            finally:
                _close_socket(sock)
            code = api.exec_inspect(made["Id"]).get("ExitCode")
        exit_code = int(code if code is not None else -1)
        elapsed = time.monotonic() - began
        timed_out = (
            timeout_s is not None and exit_code in _TIMEOUT_EXIT_CODES and elapsed >= timeout_s
        )
        return ExecResult(
            exit_code=exit_code,
            stdout=out.value().decode("utf-8", errors="replace"),
            stderr=err.value().decode("utf-8", errors="replace"),
            timed_out=timed_out,
        )

    async def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecResult:
        """Run ``cmd``; ``timeout_s`` is enforced inside the container with ``timeout``."""
        return await in_thread(self._exec_sync, cmd, cwd, env, user, timeout_s)

    def _exec_detached_sync(
        self, cmd: list[str], cwd: str | None, env: Mapping[str, str] | None, user: str | None
    ) -> None:
        container = self._container_or_raise()
        kwargs: dict[str, Any] = {"detach": True, "environment": dict(env or {})}
        if cwd:
            kwargs["workdir"] = cwd
        if user:
            kwargs["user"] = user
        with map_docker_errors(f"starting {cmd[0]!r} in {self.spec.name}"):
            container.exec_run(cmd, **kwargs)

    async def exec_detached(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
    ) -> None:
        """Start ``cmd`` with a detached ``docker exec``."""
        await in_thread(self._exec_detached_sync, cmd, cwd, env, user)

    def _open(self, path: str, cap: int) -> ArchiveStream:
        return open_archive(self._container_or_raise(), self.spec.name, path, cap)

    def _read_bytes_sync(self, path: str, max_bytes: int | None) -> bytes:
        stream = self._open(path, cap=(max_bytes or 1 << 62) + _TAR_SLACK)
        if max_bytes is not None and stream.size is not None and stream.size > max_bytes:
            stream.close()
            raise FileTooLarge(
                f"{path} in {self.spec.name} is {human_bytes(stream.size)}, over the "
                f"{human_bytes(max_bytes)} read here"
            )
        data = read_one(stream)
        if data is None:
            raise FileNotFoundError(f"{path} is not a regular file in {self.spec.name}")
        return data

    async def read_bytes(self, path: str, *, max_bytes: int | None = READ_BYTES) -> bytes:
        """Read one file through a tar stream, refused unread when over ``max_bytes``."""
        return await in_thread(self._read_bytes_sync, path, max_bytes)

    def _read_tail_sync(self, path: str, max_bytes: int) -> bytes:
        try:
            return self._read_bytes_sync(path, max_bytes)
        except FileTooLarge:
            pass
        cmd = ["tail", "-c", str(max_bytes), "--", path]
        tail = self._exec_sync(cmd, None, None, "0", None, max_output=max_bytes)
        return tail.stdout.encode()[-max_bytes:]

    async def read_tail(self, path: str, max_bytes: int) -> bytes:
        """The whole file when small enough, else its last bytes (``tail -c`` as root)."""
        return await in_thread(self._read_tail_sync, path, max_bytes)

    def _read_tree_sync(self, path: str, limits: ReadLimits) -> TreeRead:
        container = self._container_or_raise()
        if local_daemon(self.client.api.base_url):
            read = host_tree(container.attrs, path, limits)
            if read is not None:
                return read
        stream = self._open(path, limits.max_stream_bytes)
        return read_tree_limited(stream, path, limits, list_dirs=self._list_dirs_sync)

    def _list_dirs_sync(self, dirs: list[str]) -> list[str]:
        """What lies right below ``dirs``, as root: ``find`` walks where the daemon cannot.

        Raises:
            SandboxError: the listing failed.
        """
        cmd = ["find", *dirs, "-mindepth", "1", "-maxdepth", "1", "-print0"]
        done = self._exec_sync(cmd, None, None, "0", _LIST_TIMEOUT_S)
        if done.exit_code != 0:
            raise SandboxError(
                f"listing {len(dirs)} deep directories in {self.spec.name} failed "
                f"(exit {done.exit_code})"
            )
        return [name for name in done.stdout.split("\0") if name]

    async def read_tree(self, path: str, *, limits: ReadLimits = DEFAULT_LIMITS) -> TreeRead:
        """Regular files under ``path``, within ``limits``.

        A memory volume's from this host when the daemon is here (no ``docker-tar``;
        see :mod:`~durabench.sandbox.docker.host_read`), else from one streamed archive.
        """
        return await in_thread(self._read_tree_sync, path, limits)

    def _put(
        self,
        files: list[tuple[PurePosixPath, bytes]],
        dirs: list[tuple[PurePosixPath, int]] | None = None,
    ) -> None:
        container = self._container_or_raise()
        with map_docker_errors(f"writing files into {self.spec.name}"):
            if not container.put_archive("/", pack(files, dirs or ())):
                raise SandboxError(f"Docker refused to write files into {self.spec.name}")

    async def write_file(self, path: str, contents: str | bytes) -> None:
        """Write one file (parents created)."""
        data = contents.encode() if isinstance(contents, str) else contents
        rel = PurePosixPath(path).relative_to("/")
        await in_thread(self._put, [(rel, data)])

    async def write_files(
        self, files: Mapping[str, str | bytes | Path], *, dirs: Mapping[str, int] | None = None
    ) -> None:
        """Make ``dirs`` and write ``files`` with one archive: one daemon call, no ``exec``."""

        def packed() -> list[tuple[PurePosixPath, bytes]]:
            return [(_relative(dest), _contents(value)) for dest, value in files.items()]

        made = [(_relative(path), mode) for path, mode in (dirs or {}).items()]
        await in_thread(lambda: self._put(packed(), made))

    async def upload_files(self, files: Mapping[str, Path]) -> None:
        """Copy host files in one archive."""
        packed = [
            (PurePosixPath(dest).relative_to("/"), src.read_bytes()) for dest, src in files.items()
        ]
        await in_thread(self._put, packed)


def _relative(path: str) -> PurePosixPath:
    """A sandbox path as an archive extracted at ``/`` names it."""
    return PurePosixPath(path).relative_to("/")


def _contents(value: str | bytes | Path) -> bytes:
    """A file's bytes: given, encoded, or read from the host file."""
    if isinstance(value, Path):
        return value.read_bytes()
    return value.encode() if isinstance(value, str) else value
