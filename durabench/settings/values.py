"""Settings read once per process, so every process on a machine agrees on them.

The starter, the worker and the tests read the same settings, from (highest first) the
environment, ``.env`` in the working directory, ``$DURABENCH_HOME/config.toml``, and the
defaults (:mod:`durabench.settings.sources`). Nothing here is a secret: secrets are read by
activities at the last moment, by name, and the Temporal API key at connect time.
``Settings(...)`` built in code reads none of them: it holds exactly what it is given.
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from durabench.settings.numbers import PassThreshold, Port, number_problem
from durabench.settings.rate_limits import ModelRateLimit
from durabench.settings.results_url import check_results_url
from durabench.settings.sources import (
    CONFIG_FILE,
    ENV_FILE,
    PREFIX,
    ConfigFileSource,
    bad_settings,
    dotenv_value,
)

__all__ = [
    "DEFAULT_BASE_IMAGE",
    "Settings",
    "default_max_sandboxes",
    "default_max_verifiers",
    "host_memory_mib",
]

DEFAULT_BASE_IMAGE = "python:3.12-slim"


_SMALLEST_SANDBOX_MIB = 64
"""The least a sandbox is taken to hold, for the default count: memory admission decides
(:mod:`durabench.sandbox.docker.memory_admission`); the count only bounds the worker's
concurrent activities."""


def host_memory_mib() -> float | None:
    """This host's physical memory in MiB; ``None`` where it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    except (ValueError, OSError, AttributeError):
        return None


def default_max_sandboxes(host_memory: float | None = None) -> int:
    """Sandboxes a host runs at once at most, by default: a count memory never reaches.

    What a host admits is decided by memory, measured (each sandbox at what it holds and
    may grow by); this count is only its ceiling, a sandbox per 64 MiB, at least one.
    """
    mem = host_memory if host_memory is not None else host_memory_mib()
    if mem is None:
        return max(1, os.cpu_count() or 1)
    return max(1, int(mem // _SMALLEST_SANDBOX_MIB))


def default_max_verifiers(sandbox_cpus: float, host_cpus: int | None = None) -> int:
    """Verifiers a host runs at once by default: as many sandbox CPU limits as it has CPUs.

    Verifiers build and test, which is CPU-bound, unlike agents waiting on a model.
    """
    cpus = host_cpus if host_cpus is not None else os.cpu_count() or 1
    return max(1, int(cpus // sandbox_cpus))


class Settings(BaseSettings):
    """Machine-level settings of durabench; :meth:`from_env` reads them."""

    _read_sources: ClassVar[bool] = False
    """Whether construction reads the environment and files (:class:`_FromSources`)."""

    model_config = SettingsConfigDict(
        frozen=True,
        env_prefix=PREFIX,
        env_file=ENV_FILE,
        env_ignore_empty=True,
        extra="ignore",
        validate_by_name=True,
        validate_by_alias=True,
        allow_inf_nan=False,
    )

    home: Path
    """``DURABENCH_HOME``: the state directory (runs, the embedded server's history, logs).
    Read from the environment or ``.env`` only, since ``config.toml`` lives in it."""
    temporal_address: str | None = Field(default=None, validation_alias="TEMPORAL_ADDRESS")
    """``TEMPORAL_ADDRESS``: the Temporal frontend to use (or the temporal CLI's profile's,
    applied by the starter); unset: the embedded dev server on localhost (``DURABENCH_PORT``)."""
    namespace: str = Field(default="default", validation_alias="TEMPORAL_NAMESPACE")
    """``TEMPORAL_NAMESPACE``: the Temporal namespace (or the temporal CLI's profile's)."""
    task_queue: str = "durabench"
    """``DURABENCH_TASK_QUEUE``: the shared queue for workflows and host-independent work."""
    base_image: str = DEFAULT_BASE_IMAGE
    """``DURABENCH_BASE_IMAGE``: the ``BASE_IMAGE`` build argument of task Dockerfiles."""
    timeout_multiplier: float = Field(default=1.0, gt=0)
    """``DURABENCH_TIMEOUT_MULTIPLIER``: scales every task's agent time limit."""
    port: Port = 7233
    """``DURABENCH_PORT``: port of the embedded server's frontend."""
    ui_port: Port = 8233
    """``DURABENCH_UI_PORT``: port of the embedded server's Web UI."""
    infra_retries: int = Field(default=2, ge=0)
    """``DURABENCH_INFRA_RETRIES``: new attempts after an infra failure, per arm."""
    infra_backoff_sec: float = Field(default=60.0, ge=0)
    """``DURABENCH_INFRA_BACKOFF_SEC``: wait before the first infra retry (doubles after)."""
    pass_threshold: PassThreshold = 1.0
    """``DURABENCH_PASS_THRESHOLD``: a lane passes a task when its mean reward reaches this
    (0 to 1)."""
    approval_timeout_sec: float = Field(default=86_400.0, gt=0)
    """``DURABENCH_APPROVAL_TIMEOUT_SEC``: an unapproved run ends itself after this long."""
    host_timeout_sec: float = Field(default=300.0, gt=0)
    """``DURABENCH_HOST_TIMEOUT_SEC``: how long an attempt's container work may wait for its
    host's worker; then the attempt starts over on whichever host takes it."""
    host_id_override: str | None = Field(default=None, validation_alias="DURABENCH_HOST_ID")
    """``DURABENCH_HOST_ID``: this worker's host id (``hostname``: the machine's name);
    workers that share a ``DURABENCH_HOME`` need distinct ids. Unset: an id kept in ``home``."""
    ui_url: str | None = None
    """``DURABENCH_UI_URL``: the Temporal Web UI of a server durabench did not start (docker
    compose: ``http://localhost:8233``), for links to runs; the embedded one's is known."""
    gateway_network: str = "durabench-models"
    """``DURABENCH_GATEWAY_NETWORK``: the internal Docker network of sandboxes whose agent
    calls a model; it holds them and this host's model gateway, and has no route out
    (created if absent; an existing network that is not internal is refused). Sandboxes of
    agents that call no model get no network at all."""
    gateway_port: int = Field(default=8719, ge=0, le=65535)
    """``DURABENCH_GATEWAY_PORT``: the model gateway's port on that network. Fixed, so an
    agent re-attached after a worker restart finds the gateway again (0: any free port,
    lost on restart)."""
    gateway_files: int = Field(default=16_384, ge=256)
    """``DURABENCH_GATEWAY_FILES``: open files of the gateway's process (its own limit)."""
    gateway_memory_mb: int = Field(default=2048, ge=128)
    """``DURABENCH_GATEWAY_MEMORY_MB``: memory the gateway's process may allocate, in MiB."""
    gateway_connections: int = Field(default=4096, ge=1)
    """``DURABENCH_GATEWAY_CONNECTIONS``: connections the gateway holds open in all."""
    gateway_connections_per_peer: int = Field(default=64, ge=0)
    """``DURABENCH_GATEWAY_CONNECTIONS_PER_PEER``: connections one sandbox address may hold
    open (0: no such limit, where sandboxes share an address)."""
    gateway_requests: int = Field(default=1024, ge=1)
    """``DURABENCH_GATEWAY_REQUESTS``: requests in flight through the gateway in all."""
    gateway_requests_per_attempt: int = Field(default=16, ge=1)
    """``DURABENCH_GATEWAY_REQUESTS_PER_ATTEMPT``: requests one attempt may have in flight;
    one more waits for one of them to end."""
    gateway_queue_timeout_sec: float = Field(default=30.0, gt=0)
    """``DURABENCH_GATEWAY_QUEUE_TIMEOUT_SEC``: how long a request past its attempt's limit
    waits, then 429."""
    gateway_header_timeout_sec: float = Field(default=30.0, gt=0)
    """``DURABENCH_GATEWAY_HEADER_TIMEOUT_SEC``: a connection sends a request's headers
    within this (from its opening, or its last answer), or is closed."""
    gateway_body_timeout_sec: float = Field(default=60.0, gt=0)
    """``DURABENCH_GATEWAY_BODY_TIMEOUT_SEC``: a request's body arrives within this of its
    headers, or the request gets 408 and its connection is closed."""
    gateway_keep_alive_sec: float = Field(default=15.0, gt=0)
    """``DURABENCH_GATEWAY_KEEP_ALIVE_SEC``: an idle connection is kept this long."""
    gateway_backlog: int = Field(default=1024, ge=16)
    """``DURABENCH_GATEWAY_BACKLOG``: connections queued before the gateway accepts them."""
    gateway_linger_sec: float = Field(default=120.0, ge=0)
    """``DURABENCH_GATEWAY_LINGER_SEC``: how long the gateway outlives the last worker that
    used it, so agents whose worker restarts keep their model (0: it stops with it)."""
    gateway_budget_tokens: int | None = Field(
        default=None, gt=0, validation_alias="DURABENCH_BUDGET_TOKENS"
    )
    """``DURABENCH_BUDGET_TOKENS``: the default of ``--budget``, the tokens (input, output
    and cache) one attempt may use; past it the gateway refuses the agent's requests and the
    attempt ends as the model's (the budget is part of the benchmark). Unset: no budget."""
    max_spend_usd: float | None = Field(default=None, gt=0)
    """``DURABENCH_MAX_SPEND_USD``: the default of ``--max-spend``, the most a run may spend
    on model tokens over every host (priced with ``prices.toml``). Unset: no cap."""
    sandbox_memory_mb: int = Field(default=4096, gt=0)
    """``DURABENCH_SANDBOX_MEMORY_MB``: memory limit of each sandbox, in MiB."""
    sandbox_cpus: float = Field(default=2.0, gt=0)
    """``DURABENCH_SANDBOX_CPUS``: CPUs each sandbox may use (fractions allowed)."""
    sandbox_pids: int = Field(default=1024, gt=0)
    """``DURABENCH_SANDBOX_PIDS``: processes and threads each sandbox may hold at once, so a
    fork bomb stays inside it."""
    max_sandboxes: int = Field(default_factory=default_max_sandboxes, ge=1)
    """``DURABENCH_MAX_SANDBOXES``: attempts this worker host runs at once at most, across
    every run. Within it the host admits by memory, measured: each sandbox at what its
    cgroup holds plus ``DURABENCH_SANDBOX_GROWTH_MB``, never below its agent's working set,
    within the host's memory less ``DURABENCH_HOST_RESERVE_MB`` and room for its
    verifiers (default: a sandbox per 64 MiB of memory, a ceiling memory decides below)."""
    host_reserve_mb: int | None = Field(default=None, ge=0)
    """``DURABENCH_HOST_RESERVE_MB``: memory admission never hands out, kept for the host,
    the worker and its gateway (default: a tenth of the host's memory, at least 1024)."""
    sandbox_growth_mb: int = Field(default=128, ge=0)
    """``DURABENCH_SANDBOX_GROWTH_MB``: what a running sandbox is taken to grow by over what
    its cgroup holds when admission measures it."""
    max_verifiers: int = Field(
        default_factory=lambda data: default_max_verifiers(data.get("sandbox_cpus", 2.0)),
        ge=1,
    )
    """``DURABENCH_MAX_VERIFIERS``: verifiers this worker host runs at once (default: its CPU
    count over ``DURABENCH_SANDBOX_CPUS``); the others wait, as long as their phase can spare,
    then run anyway."""
    collect_file_mb: int = Field(default=64, gt=0)
    """``DURABENCH_COLLECT_FILE_MB``: the largest file kept from an attempt (a transcript
    past it keeps its last part); larger files are left out, and the result says so."""
    collect_total_mb: int = Field(default=256, gt=0)
    """``DURABENCH_COLLECT_TOTAL_MB``: what the worker keeps of one attempt's logs in all."""
    collect_files: int = Field(default=10_000, gt=0)
    """``DURABENCH_COLLECT_FILES``: the most files kept of one attempt's log directories
    (and, times 20, read of its workspace for the diff)."""
    sandbox: Literal["docker", "daytona"] = "docker"
    """``DURABENCH_SANDBOX`` (``starter run --sandbox``): where attempts run, the worker
    host's Docker daemon or Daytona (``docs/daytona.md``); every worker of a deployment
    must agree."""
    daytona_auto_stop_min: int = Field(default=30, ge=0)
    """``DURABENCH_DAYTONA_AUTO_STOP_MIN``: minutes without activity before Daytona stops a
    sandbox (0: never); a lost worker's sandbox stops paying for CPU after this long."""
    daytona_auto_delete_min: int = Field(default=60, ge=-1)
    """``DURABENCH_DAYTONA_AUTO_DELETE_MIN``: minutes after it stopped before Daytona deletes
    a sandbox (-1: never, 0: at once)."""
    daytona_network_allow_list: str | None = None
    """``DURABENCH_DAYTONA_NETWORK_ALLOW_LIST``: CIDRs a Daytona sandbox that needs no
    gateway may reach; unset: no network (an agent's sandbox allows only the gateway's
    public address)."""
    daytona_backoff_sec: float = Field(default=1.0, gt=0)
    """``DURABENCH_DAYTONA_BACKOFF_SEC``: the first pause before a Daytona call that was
    answered 429/5xx is tried again; it doubles, up to 30 s."""
    daytona_base_check: bool = True
    """``DURABENCH_DAYTONA_BASE_CHECK``: whether the plan asks the base image's registry that
    anyone may pull it, as Daytona's builds pull it; off for a self-hosted Daytona whose
    builder has the image another way (a mirror, credentials of its own)."""
    gateway_public_url: str | None = None
    """``DURABENCH_GATEWAY_PUBLIC_URL``: the model gateway's address as a remote (Daytona)
    sandbox reaches it, ``https://`` unless on a private network; the only address such a
    sandbox's network allows."""
    sandbox_disk_gb: int | None = Field(default=None, gt=0)
    """``DURABENCH_SANDBOX_DISK_GB``: cap on each sandbox's writable layer (its workspace),
    where the daemon's storage driver supports one (``overlay2`` on xfs with ``pquota``,
    devicemapper, btrfs, zfs; a daemon that cannot is refused with that reason); unset: no
    cap beyond the disk's."""
    sandbox_logs_mb: int = Field(default=1024, gt=0)
    """``DURABENCH_SANDBOX_LOGS_MB``: size of each sandbox's ``/logs`` (a tmpfs, counted in
    its memory limit), so logs cannot fill the host's disk."""
    sandbox_quota: int | None = Field(default=None, ge=1)
    """``DURABENCH_SANDBOX_QUOTA``: sandboxes at once in all, across every worker and host
    of the deployment, enforced (a slot per attempt, counted by one workflow): a remote
    service's quota, or a Docker fleet's total. Proposes ``--parallel``. Unset: no total;
    each Docker host admits by its memory, and a remote backend by ``--parallel`` alone."""
    model_rate_limits: dict[str, ModelRateLimit] = Field(default_factory=dict)
    """``DURABENCH_MODEL_RATE_LIMITS``: the team's rate limits by model id, as JSON
    (``{"claude-sonnet-4-5": {"rpm": 4000, "tpm": 2000000}}``), over the known ones
    (:mod:`durabench.agents.llm_rate_limits`). They propose ``--parallel``."""
    session_rpm: int = Field(default=10, ge=1)
    """``DURABENCH_SESSION_RPM``: requests one agent session sends a minute, at most, as
    assumed when rate limits propose ``--parallel`` (a model turn every 6 s)."""
    session_tpm: int = Field(default=100_000, ge=1)
    """``DURABENCH_SESSION_TPM``: input tokens one agent session sends a minute, counted
    against the limit (cache reads are not, by most current models), as assumed there."""
    usage_cap_cooldown_sec: float = Field(default=3600.0, gt=0)
    """``DURABENCH_USAGE_CAP_COOLDOWN_SEC``: how long an account cools after a usage cap
    the model API named no reset time for (in its headers, through the gateway)."""
    usage_cap_cooldown_max_sec: float = Field(default=5 * 3600.0, gt=0)
    """``DURABENCH_USAGE_CAP_COOLDOWN_MAX_SEC``: the longest an account cools after a usage
    cap, whatever reset the API named (a week-long reset would starve a run; the account
    is tried again after this and cools again if still capped)."""
    accounts_file_override: Path | None = Field(
        default=None, validation_alias="DURABENCH_ACCOUNTS_FILE"
    )
    """``DURABENCH_ACCOUNTS_FILE``: the accounts file; unset: ``accounts.toml`` in
    ``DURABENCH_HOME``."""
    results_url: str | None = None
    """``DURABENCH_RESULTS_URL``: an object store every host keeps results in
    (``s3://bucket/prefix``; endpoint and credentials from the standard AWS variables);
    unset: ``runs`` in ``DURABENCH_HOME``, on this machine."""
    task_roots: Annotated[tuple[Path, ...], NoDecode] = ()
    """``DURABENCH_TASK_ROOTS``: absolute directories, ``os.pathsep``-separated (``:`` on
    Linux), where this worker also accepts task directories (selection files and benchmark
    checkouts outside ``DURABENCH_HOME``); the bundled suites, ``DURABENCH_HOME/suites`` and
    runs' dataset tasks are always accepted."""

    @field_validator("*", mode="after")
    @classmethod
    def _a_number_in_reason(cls, value: Any) -> Any:
        """No number setting is NaN, infinite or past a billion (:mod:`.numbers`)."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            problem = number_problem(value)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("home", "accounts_file_override", mode="after")
    @classmethod
    def _expand_user(cls, path: Path | None) -> Path | None:
        return path.expanduser() if path else path

    @field_validator("results_url", mode="after")
    @classmethod
    def _object_store_url(cls, url: str | None) -> str | None:
        """Only URLs of object stores durabench writes to, and none carrying credentials."""
        return check_results_url(url) if url else url

    @field_validator("task_roots", mode="before")
    @classmethod
    def _split_task_roots(cls, value: Any) -> Any:
        """``os.pathsep``-separated text as paths; empty entries are skipped."""
        if isinstance(value, str):
            return tuple(entry for entry in value.split(os.pathsep) if entry.strip())
        return value

    @field_validator("task_roots", mode="after")
    @classmethod
    def _absolute_task_roots(cls, roots: tuple[Path, ...]) -> tuple[Path, ...]:
        """Only absolute roots: a relative one would depend on where each worker started."""
        roots = tuple(root.expanduser() for root in roots)
        relative = [str(root) for root in roots if not root.is_absolute()]
        if relative:
            raise ValueError(
                f"holds a relative path ({', '.join(relative)}); give absolute directories "
                f"separated by {os.pathsep!r}"
            )
        return roots

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Highest first: ``home`` as resolved, the environment, ``.env``, ``config.toml``.

        Only for :meth:`from_env`: settings built in code hold what they are given.
        """
        if not cls._read_sources:
            return (init_settings,)
        if not isinstance(init_settings, InitSettingsSource):
            raise TypeError("pydantic-settings passed no init source")
        config = ConfigFileSource(settings_cls, _config_path(init_settings.init_kwargs["home"]))
        return (init_settings, env_settings, dotenv_settings, config)

    @classmethod
    def from_env(cls) -> Settings:
        """Read the settings: the environment, then ``.env``, then ``config.toml`` in home.

        Raises:
            ConfigError: a value is of the wrong kind, or the config file cannot be read or
                holds an unknown key; the message names the setting and where it was set.
        """
        home = os.environ.get("DURABENCH_HOME") or dotenv_value("DURABENCH_HOME")
        home_dir = Path(home or Path.home() / ".durabench").expanduser()
        try:
            return _FromSources(home=home_dir)
        except ValidationError as exc:
            config = ConfigFileSource(_FromSources, _config_path(home_dir))
            raise bad_settings(_FromSources, exc, config) from None

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
    def workspace_cache_dir(self) -> Path:
        """Where the workspace before any agent is kept per image, on this host."""
        return self.home / "cache" / "workspaces"

    @property
    def runs_dir(self) -> Path:
        """Where every run's results directory lives."""
        return self.home / "runs"


class _FromSources(Settings):
    """Settings read from the environment, ``.env`` and the config file, in that order."""

    _read_sources: ClassVar[bool] = True


def _config_path(home: Path) -> Path:
    """``config.toml`` of ``home``."""
    return home / CONFIG_FILE
