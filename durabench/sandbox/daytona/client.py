"""Reaching Daytona: options, one SDK client per event loop, errors and retries.

The API key is read from the worker's environment (``DAYTONA_API_KEY``) when the client
is made, never carried in a spec, a workflow input or a sandbox. Every call goes through
:func:`call`, which retries what Daytona answers as busy or broken (429, 5xx, a dropped
connection) with growing pauses and translates the SDK's errors at this boundary.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from daytona import AsyncDaytona, DaytonaConfig
from daytona.common.errors import (
    DaytonaAuthenticationError,
    DaytonaError,
    DaytonaNotFoundError,
    DaytonaRateLimitError,
)
from pydantic import BaseModel, ConfigDict, Field

from durabench.errors import ConfigError, SandboxError, SandboxRefused
from durabench.settings.values import Settings

__all__ = [
    "DaytonaOptions",
    "NameTaken",
    "SandboxMissing",
    "call",
    "client_for",
    "close_clients",
]

T = TypeVar("T")


class DaytonaOptions(BaseModel):
    """Where Daytona is and how its sandboxes are made; no secret."""

    model_config = ConfigDict(frozen=True)

    api_url: str = "https://app.daytona.io/api"
    """``DAYTONA_API_URL``: the Daytona API."""
    target: str | None = None
    """``DAYTONA_TARGET``: the region sandboxes run in (the organisation's default if unset)."""
    auto_stop_min: int = Field(default=30, ge=0)
    """Minutes without activity before Daytona stops a sandbox (0: never); a lost worker's
    sandbox stops paying for CPU after this long."""
    auto_delete_min: int = Field(default=60, ge=-1)
    """Minutes after it stopped before Daytona deletes it (-1: never, 0: at once)."""
    network_allow_list: str | None = None
    """CIDRs the sandbox may reach (the gateway's public address); ``None``: no network."""
    retries: int = Field(default=6, ge=0)
    """How often a call Daytona answered 429/5xx is tried again."""
    backoff_s: float = Field(default=1.0, gt=0)
    """The first pause before a retry; it doubles, up to 30 s."""
    base_check: bool = True
    """Whether the plan asks the base image's registry that Daytona can pull it."""

    @classmethod
    def from_env(cls) -> DaytonaOptions:
        """The options this worker is set up with.

        Where Daytona is comes from the SDK's own ``DAYTONA_API_URL`` and ``DAYTONA_TARGET``;
        the rest from the ``DURABENCH_DAYTONA_*`` settings.
        """
        settings = Settings.from_env()
        values: dict[str, object] = {
            "auto_stop_min": settings.daytona_auto_stop_min,
            "auto_delete_min": settings.daytona_auto_delete_min,
            "network_allow_list": settings.daytona_network_allow_list,
            "backoff_s": settings.daytona_backoff_sec,
            "base_check": settings.daytona_base_check,
        }
        for key, env in (("api_url", "DAYTONA_API_URL"), ("target", "DAYTONA_TARGET")):
            if os.environ.get(env):
                values[key] = os.environ[env]
        return cls.model_validate(values)


class SandboxMissing(SandboxError):
    """Daytona has no sandbox of that name (deleted, or never made)."""


class NameTaken(SandboxError):
    """A sandbox of that name exists already: a create that is a re-attach."""


_clients: dict[tuple[int, DaytonaOptions], AsyncDaytona] = {}


def client_for(options: DaytonaOptions) -> AsyncDaytona:
    """The running loop's client for ``options`` (the SDK's session is bound to a loop).

    Raises:
        ConfigError: ``DAYTONA_API_KEY`` is not set.
    """
    key = (id(asyncio.get_running_loop()), options)
    if key not in _clients:
        api_key = os.environ.get("DAYTONA_API_KEY", "")
        if not api_key:
            raise ConfigError(
                "the daytona sandbox backend needs DAYTONA_API_KEY in the worker's "
                "environment (a key from the Daytona dashboard); set it, or run with "
                "--sandbox docker"
            )
        config = DaytonaConfig(api_key=api_key, api_url=options.api_url, target=options.target)
        _clients[key] = AsyncDaytona(config)
    return _clients[key]


async def close_clients() -> None:
    """Close the running loop's clients (tests, worker shutdown)."""
    loop = id(asyncio.get_running_loop())
    for key in [k for k in _clients if k[0] == loop]:
        await _clients.pop(key).close()  # type: ignore[no-untyped-call]


_MAX_PAUSE_S = 30.0
_REFUSED = frozenset({400, 403, 405, 410, 413, 422, 501})
"""Statuses a repeat gets again: the request, or the API, must change."""
_SANDBOX_GONE = frozenset({404, 410})
"""Statuses that say a call addressing a sandbox found none."""


def _retryable(exc: DaytonaError) -> bool:
    status = getattr(exc, "status_code", None)
    if isinstance(exc, DaytonaRateLimitError) or status == 429:
        return True
    return status is None or (status >= 500 and status not in _REFUSED) or status == 408


def _refused(what: str, status: int, exc: DaytonaError, endpoints: str | None) -> SandboxRefused:
    """A deterministic refusal, saying what was refused and what to do."""
    if status == 404:
        asked = endpoints or "the endpoint"
        return SandboxRefused(
            f"{what}: Daytona answered 404 to {asked} ({exc}): this Daytona API lacks an "
            "endpoint durabench needs. Check DAYTONA_API_URL names a Daytona API with that "
            "feature (builds need its object storage), or run with --sandbox docker"
        )
    if status == 403:
        return SandboxRefused(
            f"{what}: Daytona refused it, 403 ({exc}): DAYTONA_API_KEY lacks the permission "
            "(sandboxes: write; builds: object storage); give the key it, or run with "
            "--sandbox docker"
        )
    return SandboxRefused(
        f"{what}: Daytona refused the request, {status} ({exc}); asking again gets the same "
        "answer: fix what it names (limits, image, DAYTONA_TARGET), or run with --sandbox docker"
    )


async def call(
    what: str,
    options: DaytonaOptions,
    make: Callable[[], Awaitable[T]],
    *,
    endpoints: str | None = None,
) -> T:
    """``await make()``, retried while Daytona is busy or failing, errors translated.

    ``make`` must be safe to repeat: creation is, as it names its sandbox and a
    second create of the name is refused (the caller then finds the first).
    ``endpoints``: what the call asks of the API when it addresses no existing sandbox
    (a create, a listing); a 404 there is an endpoint missing, not a sandbox.

    Raises:
        SandboxMissing: Daytona has no such sandbox (404 or 410 to a call addressing one).
        NameTaken: a sandbox of that name exists (409).
        ConfigError: Daytona refused the key (401).
        SandboxRefused: a refusal no retry changes (400, 403, 405, 413, 422, 501, and
            404/410 to a call that addresses no sandbox): raised at once.
        SandboxError: Daytona failed, and went on failing past the retries.
    """
    pause = options.backoff_s
    for left in range(options.retries, -1, -1):
        try:
            return await make()
        except DaytonaAuthenticationError as exc:
            raise ConfigError(
                f"{what}: Daytona refused DAYTONA_API_KEY ({exc}); set a valid key"
            ) from exc
        except DaytonaError as exc:
            status = getattr(exc, "status_code", None)
            if isinstance(exc, DaytonaNotFoundError) and status is None:
                status = 404
            if status == 409:
                raise NameTaken(f"{what}: the name is taken ({exc})") from exc
            if status in _SANDBOX_GONE and endpoints is None:
                raise SandboxMissing(f"{what}: Daytona has no such sandbox ({exc})") from exc
            if status in _REFUSED or status == 404:
                raise _refused(what, status, exc, endpoints) from exc
            if not _retryable(exc) or left == 0:
                raise SandboxError(f"{what}: Daytona failed: {exc}") from exc
        except (TimeoutError, OSError) as exc:
            if left == 0:
                raise SandboxError(f"{what}: Daytona unreachable: {exc}") from exc
        await asyncio.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE_S)
    raise SandboxError(f"{what}: Daytona failed")  # pragma: no cover - the loop returns
