"""The sandbox interface: one ABC, one class per backend.

A sandbox is where one attempt runs: the agent phase, then the verifier phase, in the
same container. Backends register by name (:mod:`durabench.sandbox.backend_registry`).
"""

from __future__ import annotations

import os
import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, NamedTuple, overload

from pydantic import BaseModel, ConfigDict, Field, field_validator

from durabench.errors import ConfigError, FileTooLarge, SandboxError
from durabench.sandbox.limits import DEFAULT_LIMITS, ReadLimits, TreeRead

__all__ = ["READ_BYTES", "ExecResult", "Sandbox", "SandboxSpec"]

READ_BYTES = 1 << 20
"""What one file read takes by default: a marker, a reward, a config file."""

_KEPT_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL")
"""What root setup steps and verifiers use: ``chown`` the workspace to the agent
(CHOWN), read and write files the agent left whatever their mode (DAC_OVERRIDE), ``chmod``
and ``touch`` them (FOWNER), keep setgid bits when doing so (FSETID), drop to another user
as ``su``, ``runuser`` and apt's ``_apt`` sandbox do (SETUID, SETGID), and stop the agent's
leftover processes (KILL). Raw sockets, ``mknod``, ``chroot``, file capabilities and the
rest of Docker's defaults are dropped."""

_DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
"""Where a Docker daemon listens; a sandbox that reaches it owns the host."""


def _docker_sockets() -> set[str]:
    """The socket paths to keep out of sandboxes, ``DOCKER_HOST``'s own included."""
    found = set(_DOCKER_SOCKETS)
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        found.add(os.path.normpath(host.removeprefix("unix://")))
    return found


def _exposes(path: str, sockets: set[str]) -> bool:
    """Whether mounting ``path`` exposes a socket: it is one, or a directory above one."""
    forms = {os.path.normpath(path), os.path.realpath(path)}
    return any(
        form == sock or sock.startswith(form.rstrip("/") + "/")
        for form in forms
        for sock in sockets
    )


class ExecResult(NamedTuple):
    """What a command in the sandbox did."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool


class SandboxSpec(BaseModel):
    """What to start: image, deterministic name, labels, limits and hardening."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Deterministic name, so a retried activity finds the same sandbox."""
    image: str = ""
    """Image to start from; empty on a handle to a sandbox that exists (the phases after
    its start, its removal), which needs its name alone and cannot start one."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels (run, task, lane, attempt) for sweeping and inspection."""
    network: str = "none"
    """Docker network mode: ``none`` unless the agent calls a model, then the model
    gateway's internal network (``DURABENCH_GATEWAY_NETWORK``)."""
    memory_mb: int = Field(default=4096, gt=0)
    """Memory limit."""
    cpus: float = Field(default=2.0, gt=0)
    """CPU limit."""
    pids_limit: int = Field(default=1024, gt=0)
    """Process limit."""
    mounts: dict[str, str] = Field(default_factory=dict)
    """Host directory to path in the sandbox, read-write (only what an agent declares).
    Never the Docker socket, nor a directory that holds it."""
    disk_gb: int | None = Field(default=None, gt=0)
    """Cap on the sandbox's writable layer, where the backend supports one."""
    tmpfs: dict[str, int] = Field(default_factory=dict)
    """Size-limited in-memory file systems, gone with the sandbox: sandbox path to size in
    MiB (``/logs``), so what is written there cannot fill the host's disk."""
    cap_add: tuple[str, ...] = _KEPT_CAPABILITIES
    """Linux capabilities kept (Docker's names, without ``CAP_``); every other one is
    dropped. Only root processes in the sandbox hold them: the agent's user has none."""
    no_new_privileges: bool = True
    """Whether no process can gain privileges (setuid binaries, file capabilities)."""

    @field_validator("mounts")
    @classmethod
    def _no_docker_socket(cls, mounts: dict[str, str]) -> dict[str, str]:
        sockets = _docker_sockets()
        for host, inside in mounts.items():
            if _exposes(host, sockets) or os.path.normpath(inside) in sockets:
                raise ConfigError(
                    f"mount {host} -> {inside} would hand the sandbox the Docker socket, "
                    "and with it the host; remove that mount (an agent's mounts, or its "
                    "--agent-opt directory) and mount a directory of its own instead"
                )
        return mounts


class Sandbox(ABC):
    """One isolated environment for one attempt."""

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec

    def _image_to_start(self) -> str:
        """The spec's image, which starting needs.

        Raises:
            SandboxError: the spec names none: a handle to a sandbox that exists.
        """
        if not self.spec.image:
            raise SandboxError(
                f"sandbox {self.spec.name} cannot start: its spec names no image (a handle "
                "to reach or remove a sandbox that exists); build it with the image to start"
            )
        return self.spec.image

    @abstractmethod
    async def start(self) -> str:
        """Start the sandbox, or re-attach to a running one of the same name.

        Returns:
            The backend's id of the sandbox.

        Raises:
            SandboxError: the backend could not start it, or the spec names no image.
            DockerUnavailable: (docker) no daemon answers.
        """

    @abstractmethod
    async def stop(self, delete: bool = True) -> None:
        """Stop the sandbox, and remove it when ``delete``; a missing sandbox is not an error.

        Raises:
            SandboxError: the backend failed to stop it.
        """

    async def process_slots_left(self) -> int | None:
        """How many more processes the sandbox may hold; ``None``: the backend keeps no count.

        Counted by the backend, never by anything in the sandbox.

        Raises:
            SandboxError: the backend failed, or the sandbox is gone.
        """
        return None

    async def image_id(self) -> str | None:
        """The id of the image the sandbox runs, as the backend knows it; ``None``: no id.

        What the workspace cache is keyed on (:mod:`durabench.attempt.workspace_cache`):
        the image this sandbox was made from, never a name that may have moved since.

        Raises:
            SandboxError: the backend failed, or the sandbox is gone.
        """
        return None

    async def others_running(self) -> int | None:
        """Threads running in the sandbox besides those that keep it alive; ``None``: no count.

        Counted by the backend, never by anything in the sandbox: 0 means nothing of an
        agent or a test runs, so there is nothing to stop.

        Raises:
            SandboxError: the backend failed, or the sandbox is gone.
        """
        return None

    async def stopped_by_itself(self) -> str | None:
        """How the sandbox ended, when the backend sees it stopped though nobody stopped it.

        ``None`` when it runs, is gone, or the backend cannot tell. A sandbox stops by
        itself only when a process inside ends the one that keeps it alive: after the
        harness's command returned, that is what ran inside, not the harness.

        Raises:
            SandboxError: the backend failed.
        """
        return None

    async def restart(self) -> None:
        """End every process in the sandbox from outside it; its files stay, logs included.

        How an agent that resists being stopped is stopped: nothing runs inside the
        sandbox to do it (a fork bomb can hold every process slot). This default suits a
        backend whose files all outlive a stop; one with memory-backed directories carries
        them over itself.

        Raises:
            SandboxError: the backend failed, or the sandbox is gone.
        """
        await self.stop(delete=False)
        await self.start()

    @abstractmethod
    async def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecResult:
        """Run ``cmd`` in the sandbox and wait for it.

        A command still running after ``timeout_s`` is killed and the result has
        ``timed_out`` set; that is a result, not an error.

        Raises:
            SandboxError: the backend could not run the command at all.
        """

    @abstractmethod
    async def exec_detached(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
    ) -> None:
        """Start ``cmd`` in the sandbox and return at once; it outlives the caller.

        How a long agent session survives a dead worker: the command records its own end
        (see :mod:`durabench.sandbox.detached`), and a retried activity re-attaches to it.

        Raises:
            SandboxError: the backend could not start the command.
        """

    @overload
    async def read_file(
        self, path: str, text: Literal[True] = True, *, max_bytes: int | None = READ_BYTES
    ) -> str: ...

    @overload
    async def read_file(
        self, path: str, text: Literal[False], *, max_bytes: int | None = READ_BYTES
    ) -> bytes: ...

    async def read_file(
        self, path: str, text: bool = True, *, max_bytes: int | None = READ_BYTES
    ) -> str | bytes:
        """Read a file from the sandbox (see :meth:`read_bytes`).

        Raises:
            FileNotFoundError: no such file.
            FileTooLarge: it is over ``max_bytes``.
            SandboxError: the backend failed.
        """
        data = await self.read_bytes(path, max_bytes=max_bytes)
        return data.decode("utf-8", errors="replace") if text else data

    @abstractmethod
    async def read_bytes(self, path: str, *, max_bytes: int | None = READ_BYTES) -> bytes:
        """Read a file's bytes; a file over ``max_bytes`` is refused before it is read.

        Raises:
            FileNotFoundError: no such file.
            FileTooLarge: it is over ``max_bytes`` (``None``: no limit).
            SandboxError: the backend failed.
        """

    async def read_tail(self, path: str, max_bytes: int) -> bytes:
        """A file's last ``max_bytes`` bytes (all of it when smaller), in bounded memory.

        Raises:
            FileNotFoundError: no such file.
            SandboxError: the backend failed.
        """
        try:
            return await self.read_bytes(path, max_bytes=max_bytes)
        except FileTooLarge:
            return (await self.read_bytes(path, max_bytes=None))[-max_bytes:]

    @abstractmethod
    async def write_file(self, path: str, contents: str | bytes) -> None:
        """Write a file, creating its parent directories.

        Raises:
            SandboxError: the backend failed.
        """

    @abstractmethod
    async def read_tree(self, path: str, *, limits: ReadLimits = DEFAULT_LIMITS) -> TreeRead:
        """Every regular file under ``path``, by path relative to it, within ``limits``.

        Links are never followed. What the limits left out is in the result's ``cut``.

        Raises:
            FileNotFoundError: ``path`` does not exist.
            SandboxError: the backend failed.
        """

    async def write_files(
        self, files: Mapping[str, str | bytes | Path], *, dirs: Mapping[str, int] | None = None
    ) -> None:
        """Make ``dirs`` (sandbox path to mode, owned by root), then write ``files``.

        A file's value is its contents, or the host file to copy. What an attempt places
        before its agent runs, in one round trip where the backend can (Docker: one
        archive); this default makes the directories with one root ``exec`` and writes
        the files one by one.

        Raises:
            SandboxError: the backend failed.
        """
        if dirs:
            script = " && ".join(
                f"mkdir -p {shlex.quote(path)} && chmod {mode:o} {shlex.quote(path)}"
                for path, mode in dirs.items()
            )
            done = await self.exec(["sh", "-c", script], user="0")
            if done.exit_code != 0:
                raise SandboxError(
                    f"making {', '.join(dirs)} in {self.spec.name} failed "
                    f"(exit {done.exit_code}): {(done.stderr or done.stdout).strip()[:400]}"
                )
        for dest, value in files.items():
            await self.write_file(dest, value.read_bytes() if isinstance(value, Path) else value)

    async def upload_files(self, files: Mapping[str, Path]) -> None:
        """Copy host files into the sandbox: sandbox path to host file.

        The caller chose the files (:func:`durabench.tasks.task_files` refuses links out
        of a task); nothing here lists a host directory.

        Raises:
            SandboxError: the backend failed.
        """
        for dest, src in files.items():
            await self.write_file(dest, src.read_bytes())
