"""An in-memory sandbox: files in a dict, commands answered by a test's handler.

The attempt lifecycle runs against it without Docker; what a command does is the
handler's to say (``MockTransport``-style), so a test scripts the agent and the verifier.
A step's starter (:func:`durabench.sandbox.detached.run_step`) is played here: the
handler sees its launch as a detached call, then answers its first wait.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from durabench.errors import FileTooLarge
from durabench.sandbox import ExecResult, Sandbox, SandboxSpec
from durabench.sandbox.base import READ_BYTES
from durabench.sandbox.limits import DEFAULT_LIMITS, ReadLimits, TreeRead


@dataclass
class Call:
    """One command the sandbox was asked to run."""

    cmd: list[str]
    user: str | None
    env: dict[str, str]
    detached: bool
    cwd: str | None = None


Handler = Callable[["MemorySandbox", Call], ExecResult | None]

_STEP_STARTER = re.compile(
    r"(?:if command -v flock .*?; fi; )?"
    r"p=; if \[ -e (\S+) \] \|\| \[ -e (\S+) \] \|\| \[ -e (\S+) \]; "
)
"""The look at a step's markers a starter begins with (after its lock, where it takes one)."""
"""The root exec that starts a detached step unless a marker or its launch record exists."""

OK = ExecResult(exit_code=0, stdout="", stderr="", timed_out=False)


@dataclass
class MemorySandbox(Sandbox):
    """A sandbox whose files are a dict and whose commands a handler answers."""

    handler: Handler = lambda sb, call: None
    files: dict[str, bytes] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    started: int = 0
    stopped: bool = False
    restarted: int = 0

    def __post_init__(self) -> None:
        super().__init__(SandboxSpec(name="memory", image="memory"))

    async def start(self) -> str:
        self.started += 1
        return "memory-1"

    async def stop(self, delete: bool = True) -> None:
        self.stopped = True

    async def restart(self) -> None:
        self.restarted += 1

    def _run(
        self,
        cmd: list[str],
        user: str | None,
        env: Mapping[str, str] | None,
        detached: bool,
        cwd: str | None = None,
    ) -> ExecResult:
        call = Call(cmd=list(cmd), user=user, env=dict(env or {}), detached=detached, cwd=cwd)
        self.calls.append(call)
        return self.handler(self, call) or OK

    async def exec(self, cmd, *, cwd=None, env=None, user=None, timeout_s=None):  # type: ignore[no-untyped-def]
        found = _STEP_STARTER.match(cmd[-1])
        if found is None:
            return self._run(cmd, user, env, detached=False, cwd=cwd)
        return self._start_step(cmd, user, env, cwd, found.groups())

    def _start_step(
        self,
        cmd: list[str],
        user: str | None,
        env: Mapping[str, str] | None,
        cwd: str | None,
        paths: tuple[str, ...],
    ) -> ExecResult:
        """What a step's starter does: ``seen`` if a marker exists, else a launch (a
        detached call to the handler) and a first wait (the same call, not detached)."""
        if any(p in self.files for p in paths):
            return ExecResult(exit_code=0, stdout="seen\n", stderr="", timed_out=False)
        self._run(cmd, user, env, detached=True, cwd=cwd)
        waited = self._run(cmd, user, env, detached=False, cwd=cwd)
        return waited._replace(stdout="new\n" + waited.stdout)

    async def exec_detached(self, cmd, *, cwd=None, env=None, user=None):  # type: ignore[no-untyped-def]
        self._run(cmd, user, env, detached=True, cwd=cwd)

    async def read_bytes(self, path: str, *, max_bytes: int | None = READ_BYTES) -> bytes:
        if path not in self.files:
            raise FileNotFoundError(path)
        if max_bytes is not None and len(self.files[path]) > max_bytes:
            raise FileTooLarge(f"{path} is over {max_bytes} bytes")
        return self.files[path]

    async def write_file(self, path: str, contents: str | bytes) -> None:
        self.files[path] = contents.encode() if isinstance(contents, str) else contents

    async def read_tree(self, path: str, *, limits: ReadLimits = DEFAULT_LIMITS) -> TreeRead:
        root = PurePosixPath(path)
        under = {
            str(PurePosixPath(p).relative_to(root)): data
            for p, data in self.files.items()
            if PurePosixPath(p).is_relative_to(root)
        }
        if not under:
            raise FileNotFoundError(path)
        cap = limits.max_file_bytes
        cut = tuple(f"{path}/{rel}: too large" for rel, d in under.items() if cap and len(d) > cap)
        kept = {rel: d for rel, d in under.items() if not cap or len(d) <= cap}
        return TreeRead(kept, cut)

    def remove_tree(self, path: str) -> None:
        """Delete every file under ``path`` (what ``rm -rf`` does)."""
        root = PurePosixPath(path)
        for p in [p for p in self.files if PurePosixPath(p).is_relative_to(root)]:
            del self.files[p]
