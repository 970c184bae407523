"""Commands that outlive the worker that started them, and how to find them again.

A detached step runs in the sandbox under ``timeout`` and leaves markers in a directory::

    <dir>/step-<n>.started     written when it starts (seconds of the container's uptime)
    <dir>/step-<n>.done        "running" (padded) when it starts, overwritten in place when
                               it ends: "<exit code> <elapsed seconds> <limit>"

The script runs as root and writes the markers and the step's output into a directory
only root can enter; the command itself runs as ``user`` (``setpriv``), so an agent can
neither forge its end nor rewrite what it printed.

A worker that dies mid-step loses nothing: the step goes on in its container, its time
limit enforced there, and the retried activity waits for ``.done`` instead of starting
the step again. That is what keeps a finished (paid) agent session from running twice.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable, Mapping
from pathlib import PurePosixPath
from typing import NamedTuple

from durabench.sandbox.base import Sandbox

__all__ = ["REAP_SCRIPT", "StepEnd", "StepState", "as_user", "run_step", "step_state", "wrap_step"]

_KILL_GRACE_S = 5
_MARKER_BYTES = 256
_TIMEOUT_EXIT_CODES = (124, 137)


class StepEnd(NamedTuple):
    """How a detached step ended."""

    exit_code: int
    elapsed_s: float
    timed_out: bool


class StepState(NamedTuple):
    """What the markers say about a step."""

    started: bool
    end: StepEnd | None


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


def wrap_step(
    command: str,
    markers: PurePosixPath,
    n: int,
    timeout_s: float,
    out: str,
    user: str | None = None,
) -> str:
    """The root shell script that runs ``command`` as ``user``, output appended to ``out``.

    The end marker is written in place into space taken before the step (``1<>`` rewrites
    without allocating), so nothing the step does to the disk or the process table can
    keep its end from being recorded; its time comes from ``/proc/uptime`` (no fork).
    """
    started, done = markers / f"step-{n}.started", markers / f"step-{n}.done"
    limit = f"{max(timeout_s, 1.0):.0f}"
    return (
        f"read -r s _ < /proc/uptime; s=${{s%.*}}; echo $s > {started}; "
        f"printf '%-60s\\n' running > {done}; "
        f"timeout --kill-after={_KILL_GRACE_S} {limit} {as_user(command, user)} {out}; "
        f"rc=$?; read -r e _ < /proc/uptime; e=${{e%.*}}; "
        f'echo "$rc $((e - s)) {limit}" 1<> {done}'
    )


def _parse_end(text: str) -> StepEnd | None:
    """The end the marker records, or ``None`` while it says the step runs."""
    if not text.split() or not text.split()[0].lstrip("-").isdigit():
        return None
    code, elapsed, limit = (text.split() + ["0", "0", "0"])[:3]
    timed_out = int(code) in _TIMEOUT_EXIT_CODES and float(elapsed) >= float(limit) - 1
    return StepEnd(int(code), float(elapsed), timed_out)


async def step_state(sandbox: Sandbox, markers: PurePosixPath, n: int) -> StepState:
    """Read a step's markers."""
    try:
        done = await sandbox.read_file(str(markers / f"step-{n}.done"), max_bytes=_MARKER_BYTES)
        return StepState(started=True, end=_parse_end(done))
    except FileNotFoundError:
        pass
    try:
        await sandbox.read_file(str(markers / f"step-{n}.started"), max_bytes=_MARKER_BYTES)
        return StepState(started=True, end=None)
    except FileNotFoundError:
        return StepState(started=False, end=None)


_FIRST_POLL_S = 0.05
"""First wait for a step's end marker; it doubles up to the caller's ``poll_s``."""


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
) -> tuple[StepEnd, bool]:
    """Run step ``n`` unless it already ran or runs; wait for its end.

    The step is a :func:`wrap_step` script, started as root.

    The wait checks the markers after 50 ms, doubling up to ``poll_s``: a quick step (a
    verifier, a short agent) costs milliseconds, an hour-long one a check a second.

    Returns:
        How it ended, and whether this call re-attached to a step started earlier.
    """
    state = await step_state(sandbox, markers, n)
    reattached = state.started
    if not state.started:
        await sandbox.exec_detached(["sh", "-c", script], cwd=cwd, env=env, user="0")
    wait_s = min(_FIRST_POLL_S, poll_s)
    while state.end is None:
        await asyncio.sleep(wait_s)
        wait_s = min(wait_s * 2, poll_s)
        if on_wait is not None:
            await on_wait()
        state = await step_state(sandbox, markers, n)
    return state.end, reattached


REAP_SCRIPT = r"""
me=$$; keep=
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  if [ "$p" -gt 1 ] && { [ -z "$keep" ] || [ "$p" -lt "$keep" ]; }; then keep=$p; fi
done
round=0
while [ $round -lt 2000 ]; do
  round=$((round + 1)); left=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case $p in 1|$keep|$me) continue ;; esac
    kill -STOP "$p" 2>/dev/null
    kill -KILL "$p" 2>/dev/null
    for t in "$d"/task/*/stat; do
      read -r stat < "$t" 2>/dev/null || continue
      rest=${stat##*) }
      case ${rest%% *} in Z|X) ;; *) left=1 ;; esac
    done
  done
  [ $left -eq 0 ] && exit 0
done
echo "processes survived 2000 rounds of SIGKILL" >&2
exit 1
"""
"""Kill every process in the sandbox but its init, its keeper (the lowest pid after init:
started first) and this shell, until none of their threads is left, forks included
(stopped first, then killed), a process whose main thread exited while others run
included. Forks nothing itself. Run as root."""
