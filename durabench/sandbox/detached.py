"""Commands that outlive the worker that started them, and how to find them again.

A detached step runs in the sandbox under ``timeout`` and leaves markers in a directory::

    <dir>/step-<n>.started     written when it starts: "<uptime s> <pid> <pid start> <boot>"
                               (the root shell that records the end, and the kernel boot)
    <dir>/step-<n>.done        "running" (padded) when it starts, overwritten in place when
                               it ends: "<exit code> <elapsed seconds> <limit>"
    <launched>/step-<n>        written after ``.started``, where a restart keeps it

A step can die without recording its end: its sandbox restarted (a daemon restart, a
reboot: every process gone, and the ``/logs`` volumes, memory-backed, emptied) or its
root shell was killed from outside. (The worker's own restart of a sandbox whose agent
resists being stopped, ``Sandbox.restart``, carries ``/logs`` over: a step that ended
keeps its end.) :func:`run_step` sees both: ``.started`` names a process that no longer runs,
or the launch record outlived markers that are gone. It raises :class:`AgentLost` rather
than wait for ever, or start a paid session a second time.

The script runs as root and writes the markers and the step's output into a directory
only root can enter; the command itself runs as ``user`` (``setpriv``), so an agent can
neither forge its end nor rewrite what it printed.

A worker that dies mid-step loses nothing: the step goes on in its container, its time
limit enforced there, and the retried activity waits for ``.done`` instead of starting
the step again. That is what keeps a finished (paid) agent session from running twice.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import PurePosixPath
from typing import NamedTuple

from durabench.errors import AgentLost, SandboxError
from durabench.numerals import read_int
from durabench.sandbox.base import ExecResult, Sandbox

__all__ = [
    "StepEnd",
    "StepProcess",
    "StepState",
    "as_user",
    "run_step",
    "step_state",
    "wrap_step",
]

_KILL_GRACE_S = 5
_MARKER_BYTES = 256
_TIMEOUT_EXIT_CODES = (124, 137)


class StepEnd(NamedTuple):
    """How a detached step ended."""

    exit_code: int
    elapsed_s: float
    timed_out: bool


class StepProcess(NamedTuple):
    """The root shell of a step: it records the end, so while it runs the end will come."""

    pid: int
    start: str
    """Its start time (``/proc/<pid>/stat`` field 22): a pid reused later differs here."""
    boot: str
    """The kernel's boot id then: after a reboot, nothing of before runs."""


class StepState(NamedTuple):
    """What the markers say about a step."""

    started: bool
    end: StepEnd | None
    wiped: bool = False
    """Launched, but its markers are gone: the sandbox restarted since (or is stopped)."""


_ROOT = frozenset({"0", "root"})


def as_user(command: str, user: str | None) -> str:
    """``sh -c command`` run as ``user`` from a root shell (as itself when ``None``/root).

    ``setpriv`` (util-linux) drops to the user's ids and groups and keeps the environment,
    which carries the agent's key; ``HOME`` and ``USER`` are the user's, as ``docker exec
    --user`` would set them.
    """
    if user is None or user in _ROOT:
        return f"sh -c {shlex.quote(command)}"
    u = shlex.quote(user)
    home = f"$(awk -F: -v u={u} '$1 == u {{print $6}}' /etc/passwd)"
    return (
        f"setpriv --reuid=$(id -u {u}) --regid=$(id -g {u}) --init-groups -- "
        f'env HOME="{home}" USER={u} LOGNAME={u} sh -c {shlex.quote(command)}'
    )


_BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"
_ME = f"read -r p < /proc/$$/stat; p=${{p##*) }}; set -- $p; read -r b < {_BOOT_ID_FILE}"
"""Sets ``$20`` to this shell's start time and ``$b`` to the boot id, without a fork."""


def wrap_step(
    command: str,
    markers: PurePosixPath,
    n: int,
    timeout_s: float,
    out: str,
    user: str | None = None,
    launched: PurePosixPath | None = None,
) -> str:
    """The root shell script that runs ``command`` as ``user``, output appended to ``out``.

    The end marker is written in place into space taken before the step (``1<>`` rewrites
    without allocating), so nothing the step does to the disk or the process table can
    keep its end from being recorded; its time comes from ``/proc/uptime`` (no fork).
    ``launched`` is a root-only directory that outlives a restart of the sandbox, unlike
    ``markers``: the record there, written after ``.started``, says the step ran.
    """
    started, done = markers / f"step-{n}.started", markers / f"step-{n}.done"
    limit = f"{max(timeout_s, 1.0):.0f}"
    record = f"echo $$ > {launched / f'step-{n}'} 2>/dev/null; " if launched else ""
    return (
        f"read -r s _ < /proc/uptime; s=${{s%.*}}; {_ME}; "
        f'echo "$s $$ ${{20}} $b" > {started}; '
        f"printf '%-60s\\n' running > {done}; {record}"
        f"timeout --kill-after={_KILL_GRACE_S} {limit} {as_user(command, user)} {out}; "
        f"rc=$?; read -r e _ < /proc/uptime; e=${{e%.*}}; "
        f'echo "$rc $((e - s)) {limit}" 1<> {done}'
    )


def _parse_end(text: str) -> StepEnd | None:
    """The end the marker records, or ``None`` while it says the step runs."""
    fields = text.split()
    code = read_int(fields[0], signed=True) if fields else None
    if code is None:
        return None
    elapsed, limit = (read_int(f, signed=True) or 0 for f in (fields + ["0", "0"])[1:3])
    timed_out = code in _TIMEOUT_EXIT_CODES and elapsed >= limit - 1
    return StepEnd(code, float(elapsed), timed_out)


_BOOT_ID = re.compile(r"[0-9a-f-]{1,64}")


def _parse_process(text: str) -> StepProcess | None:
    """The step's root shell as ``.started`` names it; ``None`` in the old format."""
    fields = text.split()
    if len(fields) != 4 or read_int(fields[2]) is None or not _BOOT_ID.fullmatch(fields[3]):
        return None
    pid = read_int(fields[1])
    return None if pid is None else StepProcess(pid, fields[2], fields[3])


async def _exists(sandbox: Sandbox, path: PurePosixPath) -> bool:
    try:
        await sandbox.read_file(str(path), max_bytes=_MARKER_BYTES)
    except FileNotFoundError:
        return False
    return True


async def step_state(
    sandbox: Sandbox, markers: PurePosixPath, n: int, launched: PurePosixPath | None = None
) -> StepState:
    """Read a step's markers: one read while it runs (``.done`` says so).

    With ``launched``, a step whose markers are both gone has its launch record read; the
    record is written after both markers, so with it found, ``.done`` is read again: a
    step that started between the reads is running, and only markers missing after the
    record are wiped.
    """
    done = markers / f"step-{n}.done"
    if (state := await _done(sandbox, done)) is not None:
        return state
    if await _exists(sandbox, markers / f"step-{n}.started"):
        return StepState(started=True, end=None)
    if launched is None or not await _exists(sandbox, launched / f"step-{n}"):
        return StepState(started=False, end=None)
    return await _done(sandbox, done) or StepState(started=False, end=None, wiped=True)


async def _done(sandbox: Sandbox, done: PurePosixPath) -> StepState | None:
    """What ``.done`` says, ``None`` when it is not there."""
    try:
        text = await sandbox.read_file(str(done), max_bytes=_MARKER_BYTES)
    except FileNotFoundError:
        return None
    return StepState(started=True, end=_parse_end(text))


async def _step_process(sandbox: Sandbox, markers: PurePosixPath, n: int) -> StepProcess | None:
    """The step's root shell, as ``.started`` names it (``None`` in the old format)."""
    try:
        text = await sandbox.read_file(str(markers / f"step-{n}.started"), max_bytes=_MARKER_BYTES)
    except FileNotFoundError:
        return None
    return _parse_process(text)


_ALIVE = (
    "read -r p < /proc/{pid}/stat 2>/dev/null || exit 3; p=${{p##*) }}; set -- $p; "
    'case $1 in Z|X) exit 3 ;; esac; [ "${{20}}" = {start} ] || exit 3; '
    f'read -r b < {_BOOT_ID_FILE}; [ "$b" = {{boot}} ] || exit 3'
)
"""Exits 3 when the process is gone (or a later one has its pid); 0 while it runs."""
_GONE = 3


async def _gone(sandbox: Sandbox, process: StepProcess) -> bool:
    """Whether the step's root shell is gone for sure.

    A probe that cannot run (the agent holds every process slot, the daemon hiccups) says
    nothing: the step may well run on, and is waited for.
    """
    probe = _ALIVE.format(pid=process.pid, start=process.start, boot=process.boot)
    try:
        done = await sandbox.exec(["sh", "-c", probe], user="0")
    except SandboxError:
        return False
    return done.exit_code == _GONE


def _lost(sandbox: Sandbox, n: int, why: str) -> AgentLost:
    return AgentLost(
        f"agent step {n} in {sandbox.spec.name} {why}, without recording its end; the "
        "attempt ends as infrastructure (infra_other) and its pair runs the lane again. "
        "If it recurs, look for Docker daemon restarts and OOM kills on the worker's host"
    )


_FIRST_POLL_S = 0.05
"""First wait between marker reads when no waiter can run; it doubles up to ``poll_s``."""
_CHECK_EVERY_S = 15.0
"""How often a step still running is checked for its process (and at once on re-attach)."""

_WAIT = (
    "case $p in [1-9]*) timeout 15 tail --pid=$p -s 0.02 -f /dev/null >/dev/null 2>&1 ;; esac; "
    "w=$?; c=; i=0; [ $w -eq 124 ] && i=52; while [ $i -lt 53 ]; do "
    "read -r c e l _ < {done} 2>/dev/null; "
    'case $c in [0-9]*|-[0-9]*) echo "$c $e $l"; exit 0 ;; esac; '
    "if [ $i -lt 20 ]; then sleep 0.01; elif [ $i -lt 40 ]; then sleep 0.1; else sleep 1; fi; "
    "i=$((i + 1)); done; exit 1"
)
"""With ``$p`` the step's root shell: prints the end ``.done`` records once it does, or
exits 1 after about 15 s.

One blocking exec in place of a marker read per poll, and a wait in place of a poll: the
step's root shell writes ``.done`` and exits, and ``tail --pid`` returns within 20 ms of
that exit, forking nothing while it waits (GNU coreutils; where it is missing, or the
shell is not known, the loop after it polls: every 10 ms, every 100 ms after 0.2 s, every
second after 2 s). A wait of 15 s ends the round with one more read. A pid reused by
another process only holds the round to its 15 s."""
_WAITER = "p=; read -r _ p _ < {started} 2>/dev/null; " + _WAIT
"""Waits for a step that runs: its root shell is the one ``.started`` names."""
_STARTER = (
    "if command -v flock >/dev/null 2>&1 && (: >>{lock}) 2>/dev/null; then "
    "exec 9>>{lock}; flock -w 60 9 || true; fi; "
    "p=; if [ -e {done} ] || [ -e {started} ] || [ -e {launched} ]; then echo seen; exit 0; fi; "
    's={script}; p=$( (command -v setsid >/dev/null 2>&1 && exec setsid sh -c "$s" || '
    'exec sh -c "$s") 9>&- </dev/null >/dev/null 2>&1 & echo $!); echo new; '
    "i=0; while [ ! -e {started} ] && [ $i -lt 300 ]; do sleep 0.02; i=$((i + 1)); done; "
    "exec 9>&-; " + _WAIT
)
"""Starts the step unless a marker or its launch record exists, then waits as the waiter.

Prints ``seen`` when something exists (the caller reads the markers: re-attach), or
``new`` once the step is launched, then its end if it came within the round. The look
and the launch hold a lock (``flock`` on a root-only file beside the markers) until the
step has written ``.started`` (6 s at most): a second starter at once waits, then sees
it. An image without ``flock`` starts unlocked. The step runs in a session of its own
with its streams and the lock closed, so it holds nothing of this exec: it outlives it,
as a detached exec would, and nothing it runs can write to this output."""
_END_LINE = re.compile(r"-?[0-9]{1,6} [0-9]{1,9} [0-9]{1,9}\n?")


def _waiter(done: PurePosixPath) -> str:
    started = done.with_name(done.name.removesuffix(".done") + ".started")
    return _WAITER.format(done=shlex.quote(str(done)), started=shlex.quote(str(started)))


def _starter(script: str, markers: PurePosixPath, n: int, launched: PurePosixPath | None) -> str:
    done, started = markers / f"step-{n}.done", markers / f"step-{n}.started"
    record = launched / f"step-{n}" if launched is not None else started
    return _STARTER.format(
        done=shlex.quote(str(done)),
        started=shlex.quote(str(started)),
        launched=shlex.quote(str(record)),
        lock=shlex.quote(str(markers / f"step-{n}.lock")),
        script=shlex.quote(script),
    )


async def _beating(
    sandbox: Sandbox,
    script: str,
    heartbeat_s: float,
    on_wait: Callable[[], Awaitable[None]] | None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ExecResult:
    """Run ``script`` as root, calling ``on_wait`` every ``heartbeat_s`` until it returns.

    Raises:
        SandboxError: the exec could not run.
    """
    running = asyncio.ensure_future(sandbox.exec(["sh", "-c", script], cwd=cwd, env=env, user="0"))
    try:
        while not (await asyncio.wait({running}, timeout=heartbeat_s))[0]:
            if on_wait is not None:
                await on_wait()
        return running.result()
    finally:
        running.cancel()


def _end_of(result: ExecResult, said: str) -> StepEnd | None:
    """The end a waiter printed after ``said``; ``None`` for anything else."""
    if result.exit_code != 0 or not result.stdout.startswith(said):
        return None
    line = result.stdout.removeprefix(said)
    return _parse_end(line) if _END_LINE.fullmatch(line) else None


async def _wait_for_end(
    sandbox: Sandbox,
    done: PurePosixPath,
    heartbeat_s: float,
    on_wait: Callable[[], Awaitable[None]] | None,
) -> StepEnd | None:
    """The end the waiter read from ``.done``, calling ``on_wait`` every ``heartbeat_s``.

    The waiter is a root process reading the root-only marker: its output is the marker
    read through another channel, which only root in the sandbox can write to, and root
    could write the marker itself. Anything else (the waiter killed, a round that timed
    out, output that is not an end, an exec that could not run) gives ``None``: the caller
    reads the markers, which is all an agent can cause.
    """
    try:
        result = await _beating(sandbox, _waiter(done), heartbeat_s, on_wait)
    except SandboxError:
        return None
    return _end_of(result, "")


async def _start(
    sandbox: Sandbox,
    script: str,
    markers: PurePosixPath,
    n: int,
    launched: PurePosixPath | None,
    run: tuple[str | None, Mapping[str, str] | None, float, Callable[[], Awaitable[None]] | None],
) -> tuple[StepEnd | None, bool]:
    """Start step ``n`` unless anything of it exists; its end if the first wait saw it.

    Returns that end (``None``: the caller reads the markers) and whether the step was
    there before this call (a re-attach). The answer is a root exec's output, which only
    root in the sandbox can write to (and root could write the markers). An answer that
    is neither (the starter killed) has the markers read: a step they show is taken as
    found, and one they do not show raises, so the activity's retry, seconds later, asks
    again rather than risk a second start of a step whose launch is under way.

    Raises:
        SandboxError: the starter could not run, or could not say whether it started,
            and the markers show nothing of the step.
    """
    cwd, env, poll_s, on_wait = run
    starter = _starter(script, markers, n, launched)
    try:
        result = await _beating(sandbox, starter, poll_s, on_wait, cwd, env)
    except SandboxError as exc:  # a stopped sandbox runs nothing, but its markers read
        failed = exc
    else:
        if result.stdout.startswith("new\n"):
            return _end_of(result, "new\n"), False
        if result.stdout == "seen\n":
            return None, True
        failed = SandboxError(
            f"starting agent step {n} in {sandbox.spec.name} gave no answer (exit "
            f"{result.exit_code}); the activity is retried, and finds the step if it started"
        )
    state = await step_state(sandbox, markers, n, launched)
    if not (state.started or state.wiped):
        raise failed
    return None, True


async def run_step(
    sandbox: Sandbox,
    script: str,
    markers: PurePosixPath,
    n: int,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    poll_s: float = 1.0,
    on_wait: Callable[[], Awaitable[None]] | None = None,
    launched: PurePosixPath | None = None,
) -> tuple[StepEnd, bool]:
    """Run step ``n`` unless it already ran or runs; wait for its end.

    The step is a :func:`wrap_step` script (with the same ``launched``), started as root
    by one root exec that first looks for its markers and launch record in the sandbox
    (none: it starts the step and waits as a waiter does; any: the markers are read, as
    on re-attach). A step that starts and ends within the first wait costs that one exec.

    The wait is a root exec in the sandbox that prints the end ``.done`` records once it
    does (or returns after 15 s), with ``on_wait`` called every ``poll_s`` meanwhile. A
    waiter that returns without an end (killed, or it could not run) is followed by a
    marker read and a pause of 50 ms, doubling up to ``poll_s``, so nothing in the
    sandbox can make the worker spin. A step found running is checked for its process
    at once, and every 15 s while it runs.

    Returns:
        How it ended, and whether this call re-attached to a step started earlier.

    Raises:
        AgentLost: the step died without recording its end (see the module's docstring).
    """
    end, reattached = await _start(
        sandbox, script, markers, n, launched, (cwd, env, poll_s, on_wait)
    )
    if end is not None:
        return end, reattached
    state = await step_state(sandbox, markers, n, launched)
    wait_s = min(_FIRST_POLL_S, poll_s)
    checked = float("-inf") if reattached else time.monotonic()
    while state.end is None:
        if state.wiped:
            raise _lost(sandbox, n, "is gone with its markers: the sandbox restarted or stopped")
        if state.started and time.monotonic() - checked >= _CHECK_EVERY_S:
            checked = time.monotonic()
            process = await _step_process(sandbox, markers, n)
            if process is not None and await _gone(sandbox, process):
                state = await step_state(sandbox, markers, n, launched)  # it may just have ended
                if state.end is None:
                    why = f"no longer runs (its root shell, pid {process.pid}, died)"
                    raise _lost(sandbox, n, why)
                break
        end = await _wait_for_end(sandbox, markers / f"step-{n}.done", poll_s, on_wait)
        if end is not None:
            return end, reattached
        state = await step_state(sandbox, markers, n, launched)
        if state.end is None:
            await asyncio.sleep(wait_s)
            wait_s = min(wait_s * 2, poll_s)
            if on_wait is not None:
                await on_wait()
            state = await step_state(sandbox, markers, n, launched)
    return state.end, reattached
