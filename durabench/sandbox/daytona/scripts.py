"""The shell scripts a Daytona sandbox runs for durabench, and how their output is read.

Daytona's toolbox runs one shell command per call and answers with its exit code and one
combined output. The harness needs more: stdout and stderr apart, a command run as
another user, a time limit enforced inside the sandbox, reads refused before they are
made. Each is one root shell script here (the sandbox's toolbox user is root), built as
a string with no I/O so it is tested without a sandbox; its output is base64, so the
agent's bytes cannot be taken for the script's own.
"""

from __future__ import annotations

import base64
import hashlib
import shlex
from collections.abc import Mapping
from typing import NamedTuple

from durabench.numerals import read_int
from durabench.sandbox.base import ExecResult
from durabench.sandbox.detached import as_user
from durabench.sandbox.limits import EXEC_OUTPUT_BYTES

__all__ = [
    "MISSING",
    "TOO_LARGE",
    "ExecScript",
    "detached_script",
    "exec_script",
    "parse_exec",
    "read_script",
]

_KILL_GRACE_S = 5
_TIMEOUT_EXIT_CODES = (124, 137)
MISSING = 3
"""Exit code of :func:`read_script`: not a regular file."""
_LAUNCHES = "/var/lib/durabench-launches"
"""Where detached launches are recorded: under ``/var/lib``, which only root can write."""
TOO_LARGE = 4
"""Exit code of :func:`read_script`: the file is over the bytes read; it prints its size."""


class ExecScript(NamedTuple):
    """A command as the toolbox runs it."""

    command: str
    timeout_s: float | None


def _inner(cmd: list[str], cwd: str | None, user: str | None, timeout_s: float | None) -> str:
    line = shlex.join(cmd)
    if cwd:
        line = f"cd {shlex.quote(cwd)} && {line}"
    run = as_user(line, user)
    if timeout_s is not None:
        run = f"timeout --kill-after={_KILL_GRACE_S} {timeout_s:g} {run}"
    return run


def exec_script(
    cmd: list[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    user: str | None = None,
    timeout_s: float | None = None,
    max_output: int = EXEC_OUTPUT_BYTES,
) -> ExecScript:
    """The root script that runs ``cmd`` and prints its streams' tails and exit code.

    The streams go to files in a directory only root can enter, so the command (run as
    ``user`` when one is given) cannot rewrite what the harness reads back.
    """
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in (env or {}).items())
    run = _inner(cmd, cwd, user, timeout_s)
    script = (
        'd=$(mktemp -d) || exit 1; chmod 700 "$d"; '
        f'({exports}{run}) > "$d/o" 2> "$d/e" < /dev/null; rc=$?; '
        f'tail -c {max_output} "$d/o" | base64 -w0; echo; '
        f'tail -c {max_output} "$d/e" | base64 -w0; echo; '
        'echo "$rc"; rm -rf "$d"'
    )
    return ExecScript(f"sh -c {shlex.quote(script)}", timeout_s)


def parse_exec(output: str, timeout_s: float | None, elapsed_s: float) -> ExecResult:
    """What :func:`exec_script` printed, as a result.

    Raises:
        ValueError: the output is not the script's (the wrapper itself failed).
    """
    lines = output.split("\n")
    code = read_int(lines[2].strip(), signed=True) if len(lines) >= 3 else None
    if code is None:
        raise ValueError(f"not an exec script's output: {output[:200]!r}")
    timed_out = timeout_s is not None and code in _TIMEOUT_EXIT_CODES and elapsed_s >= timeout_s
    return ExecResult(
        exit_code=code,
        stdout=base64.b64decode(lines[0]).decode("utf-8", errors="replace"),
        stderr=base64.b64decode(lines[1]).decode("utf-8", errors="replace"),
        timed_out=timed_out,
    )


def detached_script(
    cmd: list[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    user: str | None = None,
) -> str:
    """A command that starts ``cmd`` in a session of its own, once, and returns at once.

    ``setsid`` and closed streams let it outlive the toolbox call that started it. A
    launch leaves a record (named by a hash of the command) in a directory only root can
    write: when Daytona's answer is lost after the launch (a 5xx, a dropped connection),
    the retried call finds it and starts nothing, so a paid session never runs twice.
    """
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in (env or {}).items())
    run = f"{exports}{_inner(cmd, cwd, user, None)}"
    key = hashlib.sha256(run.encode()).hexdigest()[:32]
    once = f"mkdir -p -m 700 {_LAUNCHES} && mkdir {_LAUNCHES}/{key} 2>/dev/null || exit 0; "
    return f"{once}setsid sh -c {shlex.quote(run)} > /dev/null 2>&1 < /dev/null &"


def read_script(path: str, max_bytes: int | None, *, tail: bool = False) -> str:
    """The root script that prints a regular file's bytes as base64.

    Its stderr is dropped: the toolbox mixes it into the output. A link or anything but
    a regular file exits :data:`MISSING`; a file over
    ``max_bytes`` exits :data:`TOO_LARGE` with its size, unread (or, with ``tail``, its
    last ``max_bytes`` are printed).
    """
    p = shlex.quote(path)
    check = f"exec 2>/dev/null; [ -f {p} ] && [ ! -L {p} ] || exit {MISSING}; "
    if max_bytes is None:
        return f"sh -c {shlex.quote(check + f'base64 -w0 < {p}')}"
    over = f"tail -c {max_bytes} < {p} | base64 -w0" if tail else f"echo $s; exit {TOO_LARGE}"
    body = (
        f"{check}s=$(stat -c %s {p}); "
        f'if [ "$s" -gt {max_bytes} ]; then {over}; else base64 -w0 < {p}; fi'
    )
    return f"sh -c {shlex.quote(body)}"
