"""A worker's hold on its host's gateway process: start it, lease it, check it, restart it.

One gateway serves every worker of a host (they share the home, so its grants): the
first worker that needs it binds the fixed port and starts ``python -m durabench.gateway``
with the socket; the others find it answering ``/healthz`` there, from the same store,
and use it. Each worker keeps a lease on it (a file it touches every few seconds), and
the gateway stops by itself once no lease of its code version is fresh for its linger
time: it outlives its last worker only long enough for a restarted worker to re-attach
its agents, and one of an older code version is replaced once that version's workers
are gone (until then it serves, and the worker says so).

The last gateway started on this host is named in ``gateway.json`` (its pid and URL) in
the grant store's directory, beside its log.

The child gets the keys in its environment, as the worker holds them, and nowhere else:
not in its command line, not in a file. It runs as the worker's user, who could read the
worker's environment anyway, so a narrower set would protect nothing and would break a
config or an account naming a variable the gateway was not started with.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from durabench.atomic import atomic_write
from durabench.errors import SandboxError
from durabench.gateway.grants import GrantStore
from durabench.gateway.limits import GatewayLimits
from durabench.gateway.outage import OUTAGE, record_outage
from durabench.gateway.process import SPEC_ENV, ProcessSpec, code_version, fresh_leases, store_id
from durabench.logs import get_logger

__all__ = ["GatewaySupervisor"]

log = get_logger("durabench.gateway")

CHECK_S = 5.0
"""How often the lease is touched and the gateway's health checked."""
START_S = 30.0
"""How long a starting gateway may take to answer its first health check."""
HUNG_S = 60.0
"""A gateway process alive but not answering its health check this long is restarted."""
_SOURCE_ROOT = Path(__file__).resolve().parents[2]
"""Where this worker's ``durabench`` package was imported from."""
_LEFT_RUNNING: list[subprocess.Popen[bytes]] = []
"""Gateways this process started and let go of while they serve on (not to be reaped)."""
_BASE_ENV = (
    "PATH",
    "PYTHONPATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
"""What the child needs to run and reach the APIs, beyond the keys it is given."""


class GatewaySupervisor:
    """This worker's side of the host's gateway process."""

    def __init__(
        self,
        root: Path,
        accounts_file: Path,
        environ: Mapping[str, str],
        limits: GatewayLimits,
    ) -> None:
        self.root, self.accounts_file, self.environ = root, accounts_file, environ
        self.limits = limits
        holder = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.lease = root / "leases" / f"{holder}.lease"
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self._failing_since: float | None = None
        self._warned: set[str] = set()

    def hold(self) -> None:
        """Touch this worker's lease: the gateway is in use.

        Replaced whole, never rewritten in place: the gateway reads the leases while
        workers touch them, and one it read empty would hold nothing, so a gateway with no
        linger would stop under its worker's running sessions.
        """
        self.lease.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(self.lease, code_version())

    def release(self) -> None:
        """Give up the lease; stop the gateway too when it is ours and nobody else holds it."""
        self.lease.unlink(missing_ok=True)
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        if fresh_leases(self.root) or (self.limits.linger_sec and not self._ephemeral):
            _LEFT_RUNNING.append(proc)  # it serves on: others' agents, or re-attached ones
            return
        _stop(proc)

    _ephemeral = False
    """Started on a free port (tests): no restarted worker could find it, so no linger."""

    async def ensure(self, host: str, port: int) -> str:
        """The gateway's URL at ``host:port``: one already serving this store, else a new one.

        Raises:
            SandboxError: the port is held by something else, or the gateway did not start.
        """
        self.hold()
        url = f"http://{host}:{port}"
        if port and await self._serves(url):
            return url
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            if await self._answers_soon(url):  # another worker is starting it, or started it
                return url
            raise SandboxError(
                f"the model gateway cannot listen on {host}:{port} ({exc.strerror}); "
                "free the port or set DURABENCH_GATEWAY_PORT to another one"
            ) from None
        with sock:
            sock.listen(self.limits.backlog)
            self._ephemeral = self._ephemeral or port == 0
            url = f"http://{host}:{sock.getsockname()[1]}"
            self.process = self._spawn(sock)
        await self._started(url)
        return url

    def _spawn(self, sock: socket.socket) -> subprocess.Popen[bytes]:
        limits = self.limits
        if self._ephemeral:  # no restarted worker could find it: it stops with its workers
            limits = limits.model_copy(update={"linger_sec": 0.0})
        spec = ProcessSpec(
            root=self.root, accounts_file=self.accounts_file, fd=sock.fileno(), limits=limits
        )
        env = {name: os.environ[name] for name in _BASE_ENV if name in os.environ}
        env |= dict(self.environ)
        # The child imports the durabench this worker runs, wherever that was found.
        path = [str(_SOURCE_ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        env |= {
            SPEC_ENV: spec.model_dump_json(),
            "MALLOC_ARENA_MAX": "2",  # few malloc arenas: the memory limit is for requests
            "PYTHONPATH": os.pathsep.join(path),
        }
        with (self.root / "gateway.stderr").open("wb") as stderr:
            return subprocess.Popen(
                [sys.executable, "-m", "durabench.gateway"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                pass_fds=(sock.fileno(),),
                start_new_session=True,  # a Ctrl-C of the worker's terminal is the worker's
            )

    async def _answers_soon(self, url: str) -> bool:
        """Whether a gateway of this store answers at ``url`` within :data:`START_S`."""
        began = time.monotonic()
        while time.monotonic() - began < START_S:
            if await self._serves(url):
                return True
            if self.process is not None and self.process.poll() is not None:
                return False  # the one this worker started has died
            await asyncio.sleep(0.05)
        return False

    async def _started(self, url: str) -> None:
        if await self._answers_soon(url):
            log.debug("model gateway started", url=url, pid=self.pid)
            atomic_write(self.root / "gateway.json", json.dumps({"pid": self.pid, "url": url}))
            return
        if self.process is not None and self.process.poll() is None:
            _stop(self.process)  # alive but never answering: no use to anyone
        raise SandboxError(
            f"the model gateway did not start: {self._stderr_tail() or 'no answer'}; "
            f"its log is {self.root / 'gateway.log'}"
        )

    def _stderr_tail(self) -> str:
        try:
            lines = (self.root / "gateway.stderr").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return lines[-1][:300] if lines else ""

    @property
    def pid(self) -> int | None:
        """The gateway process this worker started, while it runs."""
        return self.process.pid if self.process and self.process.poll() is None else None

    async def _serves(self, url: str) -> bool:
        """Whether a gateway of this store answers at ``url`` (of any code version)."""
        health = await health_of(url)
        if health is None or health.get("gateway") != "durabench":
            return False
        if health.get("store") not in (None, store_id(self.root)):
            raise SandboxError(
                f"the model gateway at {url} serves another DURABENCH_HOME; give each home "
                "its own DURABENCH_GATEWAY_PORT"
            )
        version = str(health.get("version", "unknown"))
        if version != code_version() and version not in self._warned:
            self._warned.add(version)
            log.warning(
                "the model gateway runs other code; it serves until its own workers stop",
                url=url,
                its_version=version,
                ours=code_version(),
            )
        return True

    async def watch(self, url: str, lock: asyncio.Lock) -> None:
        """Touch the lease and check the gateway every :data:`CHECK_S`, at once if it exits."""
        while True:
            await self._exit_or_timeout(CHECK_S)
            self.hold()
            async with lock:
                await self.check(url, probe=True)

    async def check(self, url: str, *, probe: bool) -> None:
        """Restart the gateway if it died, or (``probe``) has not answered for :data:`HUNG_S`."""
        proc = self.process
        if proc is not None and proc.poll() is None:
            if not probe or await self._alive(url):
                self._failing_since = None
                return
            self._failing_since = self._failing_since or time.monotonic()
            if time.monotonic() - self._failing_since < HUNG_S:
                return
            log.warning("the model gateway does not answer: restarting it", pid=proc.pid)
            proc.kill()
            await asyncio.to_thread(proc.wait)
        elif proc is None and await self._alive(url):  # another worker's, serving
            return
        if proc is not None:  # ours, and it exited or hung: its requests were cut
            store = GrantStore(self.root)
            cut = await asyncio.to_thread(record_outage, store, OUTAGE, proc.pid)
            log.warning("the model gateway died: its attempts' ledgers say so", attempts=cut)
        host, port = url.removeprefix("http://").rsplit(":", 1)
        with contextlib.suppress(SandboxError):  # another worker's still serves: fine
            await self.ensure(host, int(port))
            self.restarts += 1
            self._failing_since = None
            log.warning("model gateway restarted", url=url, pid=self.pid)

    async def _exit_or_timeout(self, timeout: float) -> None:
        """Sleep ``timeout``, or less: until the gateway process this worker started exits."""
        proc = self.process
        if proc is None or proc.poll() is not None or not hasattr(os, "pidfd_open"):
            await asyncio.sleep(timeout)
            return
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:
            return  # gone already
        loop, exited = asyncio.get_running_loop(), asyncio.Event()
        loop.add_reader(fd, exited.set)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(exited.wait(), timeout)
        finally:
            loop.remove_reader(fd)
            os.close(fd)

    async def _alive(self, url: str) -> bool:
        try:
            return await self._serves(url)
        except SandboxError:
            return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (it finishes what it serves within seconds), then SIGKILL."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
        return
    proc.kill()
    proc.wait()


async def health_of(url: str) -> dict[str, Any] | None:
    """What the gateway at ``url`` says of itself, or ``None`` when nothing answers so."""
    try:
        async with httpx.AsyncClient(timeout=5.0, trust_env=False) as client:
            response = await client.get(f"{url}/healthz")
        doc = json.loads(response.content)
    except (httpx.HTTPError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
