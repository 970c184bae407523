"""Every Daytona error status, for a call addressing a sandbox and for one that does not:
retried, or answered at once with the error that says what it is.

The table is written by hand: a refusal a repeat gets again (4xx but 408/409/429) is never
retried, a busy or broken API (408, 429, 5xx but 501, no status) always is, and 404 means
"no such sandbox" only for a call that addresses one.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("daytona")

from daytona.common.errors import (  # noqa: E402
    DaytonaAuthenticationError,
    DaytonaError,
    DaytonaNotFoundError,
    DaytonaRateLimitError,
)

from durabench.errors import NON_RETRYABLE, ConfigError, SandboxError, SandboxRefused  # noqa: E402
from durabench.sandbox.daytona.client import (  # noqa: E402
    DaytonaOptions,
    NameTaken,
    SandboxMissing,
    call,
)

RETRIES = 2
RETRIED = "retried"

# status: (addressing a sandbox, addressing none)
EXPECTED: dict[int | None, tuple[object, object]] = {
    None: (RETRIED, RETRIED),  # the connection dropped, a client-side timeout
    400: (SandboxRefused, SandboxRefused),
    401: (ConfigError, ConfigError),
    403: (SandboxRefused, SandboxRefused),
    404: (SandboxMissing, SandboxRefused),  # the push-access 404 of a create: refused
    405: (SandboxRefused, SandboxRefused),
    408: (RETRIED, RETRIED),
    409: (NameTaken, NameTaken),
    410: (SandboxMissing, SandboxRefused),
    413: (SandboxRefused, SandboxRefused),
    422: (SandboxRefused, SandboxRefused),
    429: (RETRIED, RETRIED),
    500: (RETRIED, RETRIED),
    501: (SandboxRefused, SandboxRefused),
    502: (RETRIED, RETRIED),
    503: (RETRIED, RETRIED),
    504: (RETRIED, RETRIED),
}


def _error(status: int | None) -> DaytonaError:
    if status == 401:
        return DaytonaAuthenticationError("bad key", status_code=401)
    if status == 404:
        return DaytonaNotFoundError("not found", status_code=404)
    if status == 429:
        return DaytonaRateLimitError("slow down", status_code=429)
    return DaytonaError(f"status {status}", status_code=status)


@pytest.mark.parametrize("status", list(EXPECTED))
@pytest.mark.parametrize("addressing", ["a sandbox", "no sandbox"])
def test_each_status_is_retried_or_answered_at_once(status: int | None, addressing: str) -> None:
    expected = EXPECTED[status][0 if addressing == "a sandbox" else 1]
    calls = 0

    async def make() -> str:
        nonlocal calls
        calls += 1
        raise _error(status)

    endpoints = None if addressing == "a sandbox" else "POST /api/sandbox"
    options = DaytonaOptions(retries=RETRIES, backoff_s=0.001)
    with pytest.raises(SandboxError if expected == RETRIED else expected) as raised:  # type: ignore[arg-type]
        asyncio.run(call("doing it", options, make, endpoints=endpoints))
    if expected == RETRIED:
        assert calls == RETRIES + 1 and type(raised.value) is SandboxError
        assert not isinstance(raised.value, NON_RETRYABLE)  # Temporal may try later
    else:
        assert calls == 1
    if expected is SandboxRefused:
        assert isinstance(raised.value, NON_RETRYABLE)
        assert "--sandbox docker" in str(raised.value) and "no such sandbox" not in str(
            raised.value
        )
