"""Daytona, asked before a run is approved: does the API answer, take the key, take builds?

Each check is one plain request to the endpoint the run will use (the SDK reaches the
same ones, :file:`docs/daytona-endpoints.txt`), so a refusal names the endpoint and its
answer in one line, and nothing paid starts against an API that would refuse every
create. Blocking: called in a thread.
"""

from __future__ import annotations

import os

import httpx

from durabench.errors import ConfigError
from durabench.sandbox.daytona.client import DaytonaOptions

__all__ = ["PREFLIGHT_TIMEOUT_S", "check_daytona"]

PREFLIGHT_TIMEOUT_S = 10.0
_PREFIX = "Daytona preflight: "
_FIX = "run with --sandbox docker meanwhile"


def check_daytona(options: DaytonaOptions) -> None:
    """Accept the Daytona API of ``options`` if it answers, takes the key and takes builds.

    Raises:
        ConfigError: one line: what failed, the endpoint and its answer, what to do.
    """
    key = os.environ.get("DAYTONA_API_KEY", "")
    if not key:
        raise ConfigError(f"{_PREFIX}DAYTONA_API_KEY is not set in the worker's environment")
    base = options.api_url.rstrip("/")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=PREFLIGHT_TIMEOUT_S) as client:
        _api_answers(client, base)
        _builds_upload(client, base)


def _get(client: httpx.Client, path: str, base: str, **params: str) -> httpx.Response:
    try:
        return client.get(path, params=params)
    except httpx.HTTPError as exc:
        raise ConfigError(
            f"{_PREFIX}the API at {base} does not answer GET {path} ({type(exc).__name__}: "
            f"{exc}); check DAYTONA_API_URL and the network, or {_FIX}"
        ) from exc


def _api_answers(client: httpx.Client, base: str) -> None:
    """``GET /sandbox``: the API is there and the key is good."""
    answer = _get(client, "/sandbox", base, limit="1")
    status = answer.status_code
    if status in (401, 403):
        raise ConfigError(
            f"{_PREFIX}{base} refused DAYTONA_API_KEY (GET /sandbox answered {status}); set "
            f"a valid key with sandbox access, or {_FIX}"
        )
    if status == 404:
        raise ConfigError(
            f"{_PREFIX}no Daytona API at {base} (GET /sandbox answered 404); DAYTONA_API_URL "
            "names the API, ending in /api (https://app.daytona.io/api)"
        )
    if status >= 400:
        raise ConfigError(
            f"{_PREFIX}{base} answered GET /sandbox with {status} ({_said(answer)}); try "
            f"again once Daytona answers, or {_FIX}"
        )


def _builds_upload(client: httpx.Client, base: str) -> None:
    """``GET /object-storage/push-access``: task images are built from uploaded files."""
    answer = _get(client, "/object-storage/push-access", base)
    status = answer.status_code
    if status < 400:
        return
    why = {
        404: "this Daytona API has no object storage",
        401: "the key may not upload",
        403: "the key may not upload",
    }.get(status, _said(answer))
    raise ConfigError(
        f"{_PREFIX}builds cannot be uploaded: GET {_path(base)}/object-storage/push-access "
        f"answered {status} ({why}); task images are built by Daytona from files uploaded "
        f"there: use a Daytona API with object storage, or {_FIX}"
    )


def _path(base: str) -> str:
    """The API's path prefix (``/api``), so the message names the endpoint as the docs do."""
    return httpx.URL(base).path.rstrip("/")


def _said(answer: httpx.Response) -> str:
    return " ".join(answer.text.split())[:160] or answer.reason_phrase
