"""The Docker backend: one container per attempt, through the ``docker`` SDK.

The container idles on ``sleep infinity`` and every phase runs with ``exec``, so agent and
verifier share it. Its name is deterministic: starting again finds it (re-attach). It is
hardened as its spec says: every capability dropped but the kept few, no new privileges,
memory, CPU and process limits, no network unless the agent needs one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, cast

import docker
import docker.errors
from docker.models.containers import Container

from durabench.errors import SandboxError
from durabench.sandbox.base import ExecResult, Sandbox, SandboxSpec
from durabench.sandbox.docker.errors import map_docker_errors, shared_docker_client
from durabench.sandbox.registry import sandbox_backend
from durabench.sandbox.tarball import pack, unpack

__all__ = ["DockerSandbox"]

_TIMEOUT_EXIT_CODES = (124, 137)
_KILL_GRACE_S = 5


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

    def _start_sync(self) -> str:
        with map_docker_errors(f"starting container {self.spec.name}"):
            container = self._find()
            if container is None:
                container = self.client.containers.run(
                    self.spec.image,
                    entrypoint=["sleep", "infinity"],
                    command=[],
                    name=self.spec.name,
                    labels=self.spec.labels,
                    detach=True,
                    init=True,
                    network_mode=self.spec.network,
                    mem_limit=f"{self.spec.memory_mb}m",
                    nano_cpus=int(self.spec.cpus * 1e9),
                    pids_limit=self.spec.pids_limit,
                    cap_drop=["ALL"],
                    cap_add=list(self.spec.cap_add),
                    security_opt=["no-new-privileges:true"] if self.spec.no_new_privileges else [],
                    volumes={h: {"bind": c, "mode": "rw"} for h, c in self.spec.mounts.items()},
                )
            elif container.status != "running":
                container.start()
            self._container = container
            return str(container.id)

    async def start(self) -> str:
        """Start the container, or re-attach to one of the same name."""
        return await asyncio.to_thread(self._start_sync)

    def _container_or_raise(self) -> Container:
        if self._container is None:
            self._container = self._find()
        if self._container is None:
            raise SandboxError(f"container {self.spec.name} is gone; the attempt must start over")
        return self._container

    def _stop_sync(self, delete: bool) -> None:
        with map_docker_errors(f"removing container {self.spec.name}"):
            container = self._find()
            if container is None:
                return
            if delete:
                container.remove(force=True)
            else:
                container.stop(timeout=_KILL_GRACE_S)
            self._container = None

    async def stop(self, delete: bool = True) -> None:
        """Stop, and remove when ``delete``; a missing container is fine."""
        await asyncio.to_thread(self._stop_sync, delete)

    def _exec_sync(
        self,
        cmd: list[str],
        cwd: str | None,
        env: Mapping[str, str] | None,
        user: str | None,
        timeout_s: float | None,
    ) -> ExecResult:
        container = self._container_or_raise()
        if timeout_s is not None:
            cmd = ["timeout", f"--kill-after={_KILL_GRACE_S}", f"{timeout_s:g}", *cmd]
        kwargs: dict[str, Any] = {"demux": True, "environment": dict(env or {})}
        if cwd:
            kwargs["workdir"] = cwd
        if user:
            kwargs["user"] = user
        began = time.monotonic()
        with map_docker_errors(f"running {cmd[0]!r} in {self.spec.name}"):
            raw = container.exec_run(cmd, **kwargs)
        exit_code = int(raw.exit_code if raw.exit_code is not None else -1)
        out, err = cast("tuple[bytes | None, bytes | None]", raw.output)
        elapsed = time.monotonic() - began
        timed_out = (
            timeout_s is not None and exit_code in _TIMEOUT_EXIT_CODES and elapsed >= timeout_s
        )
        return ExecResult(
            exit_code=exit_code,
            stdout=(out or b"").decode("utf-8", errors="replace"),
            stderr=(err or b"").decode("utf-8", errors="replace"),
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
        return await asyncio.to_thread(self._exec_sync, cmd, cwd, env, user, timeout_s)

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
        await asyncio.to_thread(self._exec_detached_sync, cmd, cwd, env, user)

    def _archive(self, path: str) -> bytes:
        container = self._container_or_raise()
        try:
            with map_docker_errors(f"reading {path} from {self.spec.name}"):
                stream, _ = container.get_archive(path)
                return b"".join(stream)
        except docker.errors.NotFound as exc:
            raise FileNotFoundError(f"{path} not found in {self.spec.name}") from exc

    async def read_bytes(self, path: str) -> bytes:
        """Read one file through a tar archive."""
        files = unpack(await asyncio.to_thread(self._archive, path))
        name = PurePosixPath(path).name
        if name not in files:
            raise FileNotFoundError(f"{path} is not a regular file in {self.spec.name}")
        return files[name]

    async def read_tree(
        self, path: str, *, max_file_bytes: int | None = 1 << 20
    ) -> dict[str, bytes]:
        """Every regular file under ``path`` (files over ``max_file_bytes`` skipped)."""
        archive = await asyncio.to_thread(self._archive, path)
        return unpack(archive, max_file_bytes=max_file_bytes)

    def _put(self, files: list[tuple[PurePosixPath, bytes]]) -> None:
        container = self._container_or_raise()
        with map_docker_errors(f"writing files into {self.spec.name}"):
            if not container.put_archive("/", pack(files)):
                raise SandboxError(f"Docker refused to write files into {self.spec.name}")

    async def write_file(self, path: str, contents: str | bytes) -> None:
        """Write one file (parents created)."""
        data = contents.encode() if isinstance(contents, str) else contents
        rel = PurePosixPath(path).relative_to("/")
        await asyncio.to_thread(self._put, [(rel, data)])

    async def upload_dir(self, host_dir: Path, dest: str) -> None:
        """Copy a host directory in one archive."""
        root = PurePosixPath(dest).relative_to("/")
        files = [
            (root / p.relative_to(host_dir).as_posix(), p.read_bytes())
            for p in sorted(host_dir.rglob("*"))
            if p.is_file()
        ]
        await asyncio.to_thread(self._put, files)
