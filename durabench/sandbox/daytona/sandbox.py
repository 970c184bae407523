"""The Daytona backend: one Daytona sandbox per attempt, through the official async SDK.

The sandbox is made from the task's Dockerfile through the SDK's image builder
(:mod:`.images`; Daytona caches what it builds by content), or from a plain image name, named
after the attempt so starting again finds it (re-attach), labelled for the sweep, with
CPU, memory and disk limits and Daytona's auto-stop and auto-delete intervals, so a
sandbox whose worker is lost stops paying soon and is gone later. Its toolbox user is
root; commands for the agent drop to its user (:mod:`.scripts`). Network: none, or only
the gateway's public address (:attr:`DaytonaOptions.network_allow_list`).

What Docker gives and Daytona does not: host mounts (refused), memory-backed log
volumes (plain directories here), a pids limit and dropped capabilities (Daytona's own
isolation, a VM per sandbox, stands in).
"""

from __future__ import annotations

import base64
import math
import shlex
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from daytona import (
    AsyncSandbox,
    CreateSandboxFromImageParams,
    FileUpload,
    Image,
    Resources,
)

from durabench.errors import ConfigError, FileTooLarge, SandboxError, SandboxGone
from durabench.sandbox.backend_registry import sandbox_backend
from durabench.sandbox.base import READ_BYTES, ExecResult, Sandbox, SandboxSpec
from durabench.sandbox.daytona.client import (
    DaytonaOptions,
    NameTaken,
    SandboxMissing,
    call,
    client_for,
)
from durabench.sandbox.daytona.images import image_for
from durabench.sandbox.daytona.scripts import (
    MISSING,
    TOO_LARGE,
    detached_script,
    exec_script,
    parse_exec,
    read_script,
)
from durabench.sandbox.daytona.trees import read_tree_remote
from durabench.sandbox.limits import DEFAULT_LIMITS, ReadLimits, TreeRead, human_bytes

__all__ = ["DaytonaSandbox"]

_DEFAULT_DISK_GB = 10
_CREATE_TIMEOUT_S = 1800
"""A whole repository's image may take a while to build the first time."""
CREATE_ENDPOINTS = (
    "POST /api/sandbox or, for a build, GET /api/object-storage/push-access (where the "
    "files a Dockerfile copies are uploaded)"
)
"""What a create asks of the API: a 404 to it is an endpoint missing."""
_ENDED = {"stopped", "error", "build_failed"}
"""Daytona's states of a sandbox that runs nothing any more (but exists)."""


def _state(sb: AsyncSandbox) -> str:
    """Its state's wire value (the SDK's sync and async enums are different classes)."""
    return str(getattr(sb.state, "value", sb.state) or "")


def _image(ref: str) -> Image:
    """The SDK image for a spec's image: a Dockerfile build, or ``FROM`` a name."""
    image = image_for(ref)
    return Image.base(image) if isinstance(image, str) else image


def _gone(name: str) -> SandboxGone:
    return SandboxGone(
        f"Daytona sandbox {name} is gone (deleted by the service, or its auto-delete "
        "interval passed); the attempt must start over"
    )


@sandbox_backend("daytona")
class DaytonaSandbox(Sandbox):
    """A Daytona sandbox."""

    def __init__(self, spec: SandboxSpec, options: DaytonaOptions | None = None) -> None:
        super().__init__(spec)
        if spec.mounts:
            raise ConfigError(
                f"sandbox {spec.name} asks for host mounts ({', '.join(spec.mounts)}); a "
                "Daytona sandbox runs on another machine and cannot mount this host's "
                "directories: run that agent with --sandbox docker"
            )
        self.options = options or DaytonaOptions.from_env()
        self._sandbox: AsyncSandbox | None = None

    def _params(self) -> CreateSandboxFromImageParams:
        spec, opts = self.spec, self.options
        return CreateSandboxFromImageParams(
            name=spec.name,
            image=_image(self._image_to_start()),
            os_user="root",
            labels=dict(spec.labels),
            resources=Resources(
                cpu=max(1, math.ceil(spec.cpus)),
                memory=max(1, math.ceil(spec.memory_mb / 1024)),
                disk=spec.disk_gb or _DEFAULT_DISK_GB,
            ),
            auto_stop_interval=opts.auto_stop_min,
            auto_delete_interval=opts.auto_delete_min,
            network_block_all=opts.network_allow_list is None or spec.network == "none",
            network_allow_list=opts.network_allow_list if spec.network != "none" else None,
        )

    async def _find(self) -> AsyncSandbox | None:
        client = client_for(self.options)
        try:
            return await call(
                f"finding {self.spec.name}", self.options, lambda: client.get(self.spec.name)
            )
        except SandboxMissing:
            return None

    async def _create(self) -> AsyncSandbox | None:
        """A new sandbox; ``None`` when the name is taken (a re-attach)."""
        client, params = client_for(self.options), self._params()
        try:
            return await call(
                f"creating {self.spec.name}",
                self.options,
                lambda: client.create(params, timeout=_CREATE_TIMEOUT_S),
                endpoints=CREATE_ENDPOINTS,
            )
        except NameTaken:
            return None

    async def start(self) -> str:
        """Create the sandbox, or re-attach to (and start) one of the same name."""
        found = await self._create() or await self._find()
        if found is None:
            raise SandboxError(f"Daytona sandbox {self.spec.name} could not be created")
        if _state(found) != "started":
            await call(f"starting {self.spec.name}", self.options, lambda: found.start())
        self._sandbox = found
        dirs = " ".join(shlex.quote(p) for p in self.spec.tmpfs)
        if dirs:
            await self._run(f"mkdir -p {dirs}")
        return str(found.id)

    async def stop(self, delete: bool = True) -> None:
        """Delete (or stop) the sandbox; a missing one is fine."""
        found = self._sandbox or await self._find()
        self._sandbox = None
        if found is None:
            return
        try:
            if delete:
                await call(f"deleting {self.spec.name}", self.options, lambda: found.delete())
            else:
                await call(f"stopping {self.spec.name}", self.options, lambda: found.stop())
        except SandboxMissing:
            pass

    async def stopped_by_itself(self) -> str | None:
        """Daytona's word on a sandbox that stopped or failed though nobody stopped it."""
        found = await self._find()
        if found is None or _state(found) not in _ENDED:
            return None
        reason = f" ({found.error_reason})" if found.error_reason else ""
        return f"Daytona reports it {_state(found)}{reason}"

    async def _handle(self) -> AsyncSandbox:
        if self._sandbox is None:
            self._sandbox = await self._find()
        if self._sandbox is None:
            raise _gone(self.spec.name)
        return self._sandbox

    async def _run(self, command: str, timeout_s: float | None = None) -> tuple[int, str]:
        """One toolbox call: exit code and output."""
        sb = await self._handle()
        try:
            done = await call(
                f"running a command in {self.spec.name}",
                self.options,
                lambda: sb.process.exec(command),
            )
        except SandboxMissing:
            self._sandbox = None
            raise _gone(self.spec.name) from None
        return int(done.exit_code if done.exit_code is not None else -1), done.result or ""

    async def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecResult:
        """Run ``cmd`` through a root script that keeps its streams apart (:mod:`.scripts`)."""
        script = exec_script(cmd, cwd=cwd, env=env, user=user, timeout_s=timeout_s)
        began = time.monotonic()
        code, output = await self._run(script.command)
        try:
            return parse_exec(output, timeout_s, time.monotonic() - began)
        except ValueError as exc:
            raise SandboxError(
                f"running {cmd[0]!r} in {self.spec.name}: the wrapper failed (exit {code})"
            ) from exc

    async def exec_detached(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
    ) -> None:
        """Start ``cmd`` in a session of its own; the toolbox call returns at once."""
        await self._run(detached_script(cmd, cwd=cwd, env=env, user=user))

    async def _read(self, path: str, max_bytes: int | None, tail: bool) -> bytes:
        code, output = await self._run(read_script(path, max_bytes, tail=tail))
        if code == MISSING:
            raise FileNotFoundError(f"{path} is not a regular file in {self.spec.name}")
        if code == TOO_LARGE and max_bytes is not None:
            size = int(output.strip() or 0)
            raise FileTooLarge(
                f"{path} in {self.spec.name} is {human_bytes(size)}, over the "
                f"{human_bytes(max_bytes)} read here"
            )
        if code != 0:
            raise SandboxError(f"reading {path} from {self.spec.name} failed (exit {code})")
        return base64.b64decode(output.strip())

    async def read_bytes(self, path: str, *, max_bytes: int | None = READ_BYTES) -> bytes:
        """Read one file, refused unread when over ``max_bytes``."""
        return await self._read(path, max_bytes, tail=False)

    async def read_tail(self, path: str, max_bytes: int) -> bytes:
        """The whole file when small enough, else its last bytes, in one call."""
        return await self._read(path, max_bytes, tail=True)

    async def write_file(self, path: str, contents: str | bytes) -> None:
        """Upload one file, its parent directory made first."""
        data = contents.encode() if isinstance(contents, str) else contents
        await self._upload([FileUpload(source=data, destination=path)])

    async def upload_files(self, files: Mapping[str, Path]) -> None:
        """Upload host files in one call (the SDK streams them from disk)."""
        await self._upload([FileUpload(source=str(src), destination=d) for d, src in files.items()])

    async def _upload(self, uploads: list[FileUpload]) -> None:
        """Upload, then make scripts executable.

        A file that starts ``#!`` is 0755, the rest 0644, as Docker's archives place them
        (a task's ``test.sh`` must run).
        """
        if not uploads:
            return
        parents = sorted({str(PurePosixPath(u.destination).parent) for u in uploads})
        await self._run("mkdir -p " + " ".join(shlex.quote(p) for p in parents))
        sb = await self._handle()
        try:
            await call(
                f"uploading files to {self.spec.name}",
                self.options,
                lambda: sb.fs.upload_files(uploads),
            )
        except SandboxMissing:
            self._sandbox = None
            raise _gone(self.spec.name) from None
        scripts = [u.destination for u in uploads if _is_script(u.source)]
        if scripts:
            await self._run("chmod 0755 " + " ".join(shlex.quote(p) for p in scripts))

    async def read_tree(self, path: str, *, limits: ReadLimits = DEFAULT_LIMITS) -> TreeRead:
        """Regular files under ``path`` as one capped tar (:mod:`.trees`)."""
        return await read_tree_remote(self._run, self.spec.name, path, limits)


def _is_script(source: bytes | str) -> bool:
    """Whether an upload's contents (bytes, or a host file's path) start with ``#!``."""
    if isinstance(source, bytes):
        return source.startswith(b"#!")
    with open(source, "rb") as f:
        return f.read(2) == b"#!"
