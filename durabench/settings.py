"""Settings read once from the environment, so every process agrees on them.

The starter, the worker and the tests read the same variables; nothing here is a secret
(secrets are read by activities at the last moment, by name).
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durabench.errors import ConfigError

__all__ = ["DEFAULT_BASE_IMAGE", "Settings", "default_max_sandboxes"]

DEFAULT_BASE_IMAGE = "python:3.12-slim"

_NUMBERS = {
    "DURABENCH_TIMEOUT_MULTIPLIER": "timeout_multiplier",
    "DURABENCH_PORT": "port",
    "DURABENCH_UI_PORT": "ui_port",
    "DURABENCH_INFRA_RETRIES": "infra_retries",
    "DURABENCH_INFRA_BACKOFF_SEC": "infra_backoff_sec",
    "DURABENCH_PASS_THRESHOLD": "pass_threshold",
    "DURABENCH_APPROVAL_TIMEOUT_SEC": "approval_timeout_sec",
    "DURABENCH_MAX_SANDBOXES": "max_sandboxes",
    "DURABENCH_HOST_TIMEOUT_SEC": "host_timeout_sec",
    "DURABENCH_SANDBOX_MEMORY_MB": "sandbox_memory_mb",
    "DURABENCH_SANDBOX_CPUS": "sandbox_cpus",
    "DURABENCH_SANDBOX_PIDS": "sandbox_pids",
    "DURABENCH_USAGE_CAP_COOLDOWN_SEC": "usage_cap_cooldown_sec",
    "DURABENCH_COLLECT_FILE_MB": "collect_file_mb",
    "DURABENCH_COLLECT_TOTAL_MB": "collect_total_mb",
    "DURABENCH_COLLECT_FILES": "collect_files",
    "DURABENCH_SANDBOX_LOGS_MB": "sandbox_logs_mb",
    "DURABENCH_SANDBOX_DISK_GB": "sandbox_disk_gb",
    "DURABENCH_GATEWAY_PORT": "gateway_port",
    "DURABENCH_BUDGET_TOKENS": "gateway_budget_tokens",
}
"""Numeric settings: environment variable to field."""


def default_max_sandboxes() -> int:
    """One sandbox per CPU, at most one per 4 GiB of memory, at least one."""
    cpus = os.cpu_count() or 1
    try:
        mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return max(1, cpus)
    return max(1, min(cpus, int(mem_gib // 4)))


def _task_roots(value: str) -> tuple[Path, ...]:
    """``DURABENCH_TASK_ROOTS`` as paths; empty entries are skipped.

    Raises:
        ConfigError: an entry is not an absolute path (a relative one would depend on the
            directory each worker was started in).
    """
    roots = [Path(entry).expanduser() for entry in value.split(os.pathsep) if entry.strip()]
    relative = [str(root) for root in roots if not root.is_absolute()]
    if relative:
        raise ConfigError(
            f"DURABENCH_TASK_ROOTS holds a relative path ({', '.join(relative)}); give "
            f"absolute directories separated by {os.pathsep!r}"
        )
    return tuple(roots)


class Settings(BaseModel):
    """Machine-level settings of durabench."""

    model_config = ConfigDict(frozen=True)

    home: Path
    """State directory (``DURABENCH_HOME``, default ``~/.durabench``): runs, server DB, logs."""
    temporal_address: str | None = None
    """``TEMPORAL_ADDRESS``; unset means the embedded dev server on localhost:7233."""
    namespace: str = "default"
    """``TEMPORAL_NAMESPACE``."""
    task_queue: str = "durabench"
    """``DURABENCH_TASK_QUEUE``: the shared queue for workflows and host-independent work."""
    base_image: str = DEFAULT_BASE_IMAGE
    """``DURABENCH_BASE_IMAGE``: the ``BASE_IMAGE`` build argument of task Dockerfiles."""
    timeout_multiplier: float = Field(default=1.0, gt=0)
    """``DURABENCH_TIMEOUT_MULTIPLIER``: scales every task's agent time limit."""
    port: int = 7233
    """Port of the embedded server's frontend (``DURABENCH_PORT``)."""
    ui_port: int = 8233
    """Port of the embedded server's Web UI (``DURABENCH_UI_PORT``)."""
    infra_retries: int = Field(default=2, ge=0)
    """``DURABENCH_INFRA_RETRIES``: new attempts after an infra failure, per arm."""
    infra_backoff_sec: float = Field(default=60.0, ge=0)
    """``DURABENCH_INFRA_BACKOFF_SEC``: wait before the first infra retry (doubles after)."""
    pass_threshold: float = 1.0
    """``DURABENCH_PASS_THRESHOLD``: a lane passes a task when its mean reward reaches this."""
    approval_timeout_sec: float = Field(default=86_400.0, gt=0)
    """``DURABENCH_APPROVAL_TIMEOUT_SEC``: an unapproved run ends itself after this long."""
    max_sandboxes: int = Field(default_factory=lambda: default_max_sandboxes(), ge=1)
    """``DURABENCH_MAX_SANDBOXES``: attempts this worker host runs at once, across every run
    (default: its CPU count, at most one per 4 GiB of memory)."""
    host_timeout_sec: float = Field(default=300.0, gt=0)
    """``DURABENCH_HOST_TIMEOUT_SEC``: how long an attempt's container work may wait for its
    host's worker; then the attempt starts over on whichever host takes it."""
    host_id_override: str | None = None
    """``DURABENCH_HOST_ID``: this worker's host id (``hostname``: the machine's name), for
    workers that share a ``DURABENCH_HOME``; unset: an id kept in ``home``."""
    tls_ca: Path | None = None
    """``TEMPORAL_TLS_CA``: CA certificate file of the Temporal frontend."""
    tls_cert: Path | None = None
    """``TEMPORAL_TLS_CERT``: client certificate file (mTLS)."""
    tls_key: Path | None = None
    """``TEMPORAL_TLS_KEY``: client private key file (mTLS). ``TEMPORAL_API_KEY`` is read
    at connect time and kept nowhere."""
    gateway_network: str = "durabench-models"
    """``DURABENCH_GATEWAY_NETWORK``: the internal Docker network of sandboxes whose agent
    calls a model; it holds them and this host's model gateway, and has no route out.
    Sandboxes of agents that call no model get no network at all."""
    gateway_port: int = Field(default=8719, ge=0, le=65535)
    """``DURABENCH_GATEWAY_PORT``: the model gateway's port on that network. Fixed, so an
    agent re-attached after a worker restart finds the gateway again (0: any free port)."""
    gateway_budget_tokens: int | None = Field(default=None, gt=0)
    """``DURABENCH_BUDGET_TOKENS``: tokens (input, output and cache) one attempt may use;
    past it the gateway refuses the agent's requests and the attempt ends as the model's
    (the budget is part of the benchmark). Unset: no budget."""
    sandbox_memory_mb: int = Field(default=4096, gt=0)
    """``DURABENCH_SANDBOX_MEMORY_MB``: memory limit of each sandbox, in MiB."""
    sandbox_cpus: float = Field(default=2.0, gt=0)
    """``DURABENCH_SANDBOX_CPUS``: CPUs each sandbox may use (fractions allowed)."""
    sandbox_pids: int = Field(default=1024, gt=0)
    """``DURABENCH_SANDBOX_PIDS``: processes and threads each sandbox may hold at once, so a
    fork bomb stays inside it."""
    collect_file_mb: int = Field(default=64, gt=0)
    """``DURABENCH_COLLECT_FILE_MB``: the largest file kept from an attempt (a transcript
    past it keeps its last part); larger files are left out, and the result says so."""
    collect_total_mb: int = Field(default=256, gt=0)
    """``DURABENCH_COLLECT_TOTAL_MB``: what the worker keeps of one attempt's logs in all."""
    collect_files: int = Field(default=10_000, gt=0)
    """``DURABENCH_COLLECT_FILES``: the most files kept of one attempt's log directories
    (and, times 20, read of its workspace for the diff)."""
    sandbox_disk_gb: int | None = Field(default=None, gt=0)
    """``DURABENCH_SANDBOX_DISK_GB``: cap on each sandbox's writable layer (its workspace),
    where the daemon's storage driver supports one (``overlay2`` on xfs with ``pquota``,
    devicemapper, btrfs, zfs); unset: no cap beyond the disk's."""
    sandbox_logs_mb: int = Field(default=1024, gt=0)
    """``DURABENCH_SANDBOX_LOGS_MB``: size of each sandbox's ``/logs`` (a tmpfs, counted in
    its memory limit), so logs cannot fill the host's disk."""
    usage_cap_cooldown_sec: float = Field(default=3600.0, gt=0)
    """``DURABENCH_USAGE_CAP_COOLDOWN_SEC``: how long an account cools after a usage cap
    whose message names no reset time."""
    accounts_file_override: Path | None = None
    """``DURABENCH_ACCOUNTS_FILE``: the accounts file; unset: ``accounts.toml`` in ``home``."""
    task_roots: tuple[Path, ...] = ()
    """``DURABENCH_TASK_ROOTS``: absolute directories, ``os.pathsep``-separated, where this
    worker also accepts task directories (selection files and benchmark checkouts outside
    ``home``); the bundled suites and ``home`` are always accepted."""

    @classmethod
    def from_env(cls) -> Settings:
        """Read the settings from the environment.

        Raises:
            ConfigError: a variable holds a value of the wrong kind; the message names it.
        """
        env = os.environ
        home = Path(env.get("DURABENCH_HOME") or Path.home() / ".durabench").expanduser()
        fields = {name: env[var] for var, name in _NUMBERS.items() if env.get(var)}
        accounts = env.get("DURABENCH_ACCOUNTS_FILE")
        roots = _task_roots(env.get("DURABENCH_TASK_ROOTS", ""))
        try:
            return cls(
                home=home,
                temporal_address=env.get("TEMPORAL_ADDRESS") or None,
                namespace=env.get("TEMPORAL_NAMESPACE") or "default",
                task_queue=env.get("DURABENCH_TASK_QUEUE") or "durabench",
                base_image=env.get("DURABENCH_BASE_IMAGE") or DEFAULT_BASE_IMAGE,
                gateway_network=env.get("DURABENCH_GATEWAY_NETWORK") or "durabench-models",
                host_id_override=env.get("DURABENCH_HOST_ID") or None,
                tls_ca=env.get("TEMPORAL_TLS_CA") or None,
                tls_cert=env.get("TEMPORAL_TLS_CERT") or None,
                tls_key=env.get("TEMPORAL_TLS_KEY") or None,
                accounts_file_override=Path(accounts).expanduser() if accounts else None,
                task_roots=roots,
                **fields,
            )
        except ValidationError as exc:
            bad = {str(e["loc"][0]) for e in exc.errors()}
            names = ", ".join(f"{var}={env[var]!r}" for var, n in _NUMBERS.items() if n in bad)
            raise ConfigError(f"bad setting {names}: {exc.errors()[0]['msg']}") from None

    @property
    def host_id(self) -> str:
        """This machine's stable id (kept in ``home``): a restarted worker gets its queue back."""
        if self.host_id_override == "hostname":
            return socket.gethostname()
        if self.host_id_override:
            return self.host_id_override
        path = self.home / "host-id"
        if not path.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}\n")
        return path.read_text().strip()

    @property
    def accounts_file(self) -> Path:
        """The accounts file: ``DURABENCH_ACCOUNTS_FILE``, else ``accounts.toml`` in ``home``."""
        return self.accounts_file_override or self.home / "accounts.toml"

    @property
    def address(self) -> str:
        """The Temporal frontend address to connect to."""
        return self.temporal_address or f"localhost:{self.port}"

    @property
    def agent_tools_dir(self) -> Path:
        """Where agent CLIs installed with npm are kept, once per version, on this host."""
        return self.home / "agent-tools"

    @property
    def runs_dir(self) -> Path:
        """Where every run's results directory lives."""
        return self.home / "runs"
