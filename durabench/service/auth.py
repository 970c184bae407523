"""Credentials for the benchmark service, read from the environment at the last moment.

The key never enters a model, a workflow input or a log line: an activity calls
:func:`service_auth_from_env` right before it builds a client, and the :class:`ServiceAuth`
it gets back hides its key from ``repr`` and scrubs it out of any text the service echoes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from durabench.settings.secrets import scrub_text

__all__ = ["BEARER_KEY_ENV", "DESCOPE_KEY_ENV", "AuthKind", "ServiceAuth", "service_auth_from_env"]

DESCOPE_KEY_ENV = "VALS_AUTH_KEY"
"""The tenant key, sent as ``x-descope-api-key``; the only key the v1 API accepts."""
BEARER_KEY_ENV = "BENCHMARK_API_KEY"
"""The legacy key, sent as ``Authorization: Bearer``."""

AuthKind = Literal["descope", "bearer", "none"]
"""Which key a client sends."""


class ServiceAuth:
    """The headers that authenticate one client; its key stays out of ``repr``."""

    __slots__ = ("_key", "kind")

    def __init__(self, kind: AuthKind, key: str = "") -> None:
        self.kind: AuthKind = kind
        self._key = key

    def headers(self) -> dict[str, str]:
        """Headers to send with every request."""
        if self.kind == "descope":
            return {"x-descope-api-key": self._key}
        if self.kind == "bearer":
            return {"Authorization": f"Bearer {self._key}"}
        return {}

    def scrub(self, text: str) -> str:
        """``text`` with the key replaced, for service messages that echo what they got."""
        return scrub_text(text, [self._key]) if self._key else text

    def __repr__(self) -> str:
        return f"ServiceAuth(kind={self.kind!r})"


def service_auth_from_env(environ: Mapping[str, str] | None = None) -> ServiceAuth:
    """The credentials the environment holds: ``VALS_AUTH_KEY`` wins over ``BENCHMARK_API_KEY``.

    No key at all is allowed (a local service may need none); a service that wants one
    answers 401, and the error names both variables.
    """
    env = os.environ if environ is None else environ
    if descope := env.get(DESCOPE_KEY_ENV, "").strip():
        return ServiceAuth("descope", descope)
    if bearer := env.get(BEARER_KEY_ENV, "").strip():
        return ServiceAuth("bearer", bearer)
    return ServiceAuth("none")
