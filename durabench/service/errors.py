"""The service's refusals, translated into durabench's errors with what to do about them.

Every message names the call, carries the service's own reason (scrubbed of the key, in
case the service echoes what it received) and says what to change.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import httpx

from durabench.errors import ServiceAuthError, ServiceError, ServiceRejected, ServiceUnsupported
from durabench.service.auth import BEARER_KEY_ENV, DESCOPE_KEY_ENV, ServiceAuth

__all__ = ["Call", "error_for_response", "service_message"]

_MESSAGE_CHARS = 500


class Call(NamedTuple):
    """One endpoint call, as error messages name it."""

    method: str
    """HTTP method."""
    url: str
    """Full URL."""
    v1: bool
    """Whether it is a v1 endpoint (v1 accepts only the tenant key)."""
    store: bool = False
    """A presigned storage URL, not the service: its answers are not quoted (a store's
    error body can echo the signature), and its refusals concern this upload only."""

    def __str__(self) -> str:
        # Without the query: a presigned URL's signature is a credential of its own.
        return f"{self.method} {self.url.split('?', 1)[0]}"


def service_message(response: httpx.Response, auth: ServiceAuth) -> str:
    """The reason the service gave: FastAPI's ``detail``, a ``message``/``error``, or the text."""
    text = response.text
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for field in ("detail", "message", "error"):
            if body.get(field):
                found = body[field]
                text = found if isinstance(found, str) else json.dumps(found)
                break
    text = " ".join(text.split())[:_MESSAGE_CHARS] or response.reason_phrase
    return auth.scrub(text)


def _auth_hint(call: Call, status: int, auth: ServiceAuth) -> str:
    if status == 401:
        either = f"set {DESCOPE_KEY_ENV} or {BEARER_KEY_ENV} in the worker's environment"
        return either if auth.kind == "none" else f"the key was not accepted; {either}"
    if call.v1 and auth.kind != "descope":
        held = f"only {BEARER_KEY_ENV} is set" if auth.kind == "bearer" else "no key is set"
        return (
            f"the v1 API accepts only {DESCOPE_KEY_ENV} (sent as x-descope-api-key) and "
            f"{held}; set {DESCOPE_KEY_ENV} on the worker, or use the legacy API"
        )
    return "the key may not use this dataset or endpoint; check the dataset name and the key"


def _store_error(call: Call, status: int, retry_after_s: float | None) -> ServiceError:
    if status == 413:
        return ServiceRejected(
            f"{call} was refused ({status}): the artifact is larger than the service accepts; "
            "upload a smaller file (--response-file)"
        )
    if status in (401, 403):
        return ServiceRejected(
            f"{call} was refused ({status}): the upload URL expired or is not valid; "
            "grading the attempt again asks for a new one (python -m starter score)"
        )
    if 400 <= status < 500 and status not in (408, 429):
        return ServiceRejected(f"{call} was refused ({status})")
    return ServiceError(
        f"{call} failed ({status}); the store is busy or down, and the upload is retried later",
        retry_after_s=retry_after_s,
    )


def error_for_response(
    call: Call, response: httpx.Response, auth: ServiceAuth, *, retry_after_s: float | None = None
) -> ServiceError:
    """The error for a response the client will not retry (or has retried enough).

    ``retry_after_s`` is kept on a transient error, so the caller can wait as long as the
    service asked before its next try; the error's ``status`` is the response's.
    """
    error = _error_for(call, response, auth, retry_after_s)
    error.status = response.status_code
    return error


def _error_for(
    call: Call, response: httpx.Response, auth: ServiceAuth, retry_after_s: float | None
) -> ServiceError:
    status = response.status_code
    if call.store:
        return _store_error(call, status, retry_after_s)
    said = f"{status}: {service_message(response, auth)}"
    if status in (401, 403):
        return ServiceAuthError(f"{call} was refused ({said}); {_auth_hint(call, status, auth)}")
    if status == 501:
        return ServiceUnsupported(f"{call}: the service does not implement this ({said})")
    if status == 413:
        return ServiceRejected(
            f"{call} was refused ({said}): the artifact is larger than the service accepts; "
            "upload a smaller file (--response-file)"
        )
    if status == 404:
        return ServiceRejected(
            f"{call} found nothing ({said}); check the dataset name and the task ids"
        )
    if 400 <= status < 500 and status not in (408, 409, 429):
        return ServiceRejected(f"{call} was refused ({said}); fix what the service names")
    return ServiceError(
        f"{call} failed ({said}); the service is busy or down, and the call is retried later",
        retry_after_s=retry_after_s,
    )
