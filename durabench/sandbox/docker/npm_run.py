"""npm, run so that its own words reach build.log as it runs and end it when they say fail.

npm retries a failed fetch for about a minute per package before it gives up, and at its
default log level says nothing meanwhile: behind a TLS-inspecting proxy build.log held one
line while the worker waited out its whole timeout. Here npm logs each fetch and each failed
attempt (``--loglevel=http``), every line is copied into the log as it comes, an attempt
that failed for a reason no retry can fix (an untrusted certificate, an unknown host) stops
npm at once, and the failure carries npm's last lines.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from typing import TextIO

__all__ = ["LOGLEVEL", "run_npm"]

LOGLEVEL = "--loglevel=http"
"""npm's log level that names each fetch and each failed attempt as it happens."""
_TAIL_LINES = 15
_HOPELESS = re.compile(
    r"attempt \d+ failed with "
    r"(?P<code>[A-Z_]*CERT[A-Z_]*|UNABLE_TO_VERIFY_LEAF_SIGNATURE|ENOTFOUND)\b"
)
"""A failed attempt no retry can fix, as npm logs it at ``http`` level (``npm http fetch GET
<url> attempt 1 failed with SELF_SIGNED_CERT_IN_CHAIN``): npm's code for it."""
_HINTS = {
    "ENOTFOUND": "the worker cannot resolve the registry's host: check its DNS or HTTPS_PROXY",
}
_CERT_HINT = (
    "npm does not trust the registry's certificate: behind a TLS-inspecting proxy, set "
    "NODE_EXTRA_CA_CERTS (or npm_config_cafile) on the worker to the proxy's CA file"
)


def _stop(proc: subprocess.Popen[str]) -> None:
    """End npm and whatever it started (its own process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_npm(
    args: Sequence[str], env: Mapping[str, str], log: TextIO, timeout_s: float
) -> str | None:
    """Run npm with ``args``, each output line copied to ``log`` as it comes; blocking.

    Returns:
        ``None`` when npm succeeded, else why it failed in npm's words and what to do: a
        hopeless failed attempt (npm is stopped at once), a non-zero exit, or the timeout;
        with npm's last lines.
    """
    timed_out = threading.Event()
    tail: deque[str] = deque(maxlen=_TAIL_LINES)
    hopeless = None
    with subprocess.Popen(
        [*args, LOGLEVEL],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env),
        text=True,
        errors="replace",
        start_new_session=True,
    ) as proc:

        def on_timeout() -> None:
            timed_out.set()
            _stop(proc)

        timer = threading.Timer(timeout_s, on_timeout)
        timer.start()
        said_all = False
        try:
            for line in proc.stdout or ():
                log.write(line)
                log.flush()
                tail.append(line.rstrip())
                hopeless = _HOPELESS.search(line)
                if hopeless is not None:
                    break
            else:
                said_all = True  # npm closed its output: it is ending on its own
        finally:
            if not said_all:  # stopped early, or failed here: npm must not run on
                _stop(proc)
            code = proc.wait()
            timer.cancel()
    last = "\n".join(f"  {line}" for line in tail) or "  (npm printed nothing)"
    if hopeless is not None:
        code_name = hopeless["code"]
        hint = _HINTS.get(code_name, _CERT_HINT)
        return f"npm failed with {code_name}, which no retry fixes; {hint}. npm said:\n{last}"
    if timed_out.is_set():
        return f"npm did not finish within {timeout_s:g} s. npm said:\n{last}"
    if code != 0:
        return f"npm exited {code}. npm said:\n{last}"
    return None
