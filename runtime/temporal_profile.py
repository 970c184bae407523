"""Which Temporal durabench uses: the ``temporal`` CLI's profile and ``TEMPORAL_*`` variables.

:mod:`temporalio.envconfig` reads what the ``temporal`` CLI reads: the profile file
(``TEMPORAL_CONFIG_FILE``, else ``~/.config/temporalio/temporal.toml``), the profile
``TEMPORAL_PROFILE`` names (else ``default``), and ``TEMPORAL_ADDRESS``,
``TEMPORAL_NAMESPACE``, ``TEMPORAL_API_KEY``, ``TEMPORAL_TLS_*`` over it. ``.env`` may hold
those variables too; the environment wins. durabench's own TLS variables
(``TEMPORAL_TLS_CA``, ``_CERT``, ``_KEY``) still work: they stand for the CLI's ``*_PATH``
ones. A profile without an address leaves the embedded server in charge.

The API key goes from the profile to the client's connect call and nowhere else: not into
:class:`~durabench.settings.values.Settings`, logs, workflow inputs or messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from dotenv import dotenv_values
from temporalio.envconfig import ClientConfigProfile
from temporalio.service import TLSConfig

from durabench.errors import ConfigError
from durabench.settings.sources import ENV_FILE
from durabench.settings.values import Settings

__all__ = ["LEGACY_TLS", "ConnectOptions", "connect_options", "load_profile", "load_settings"]

LEGACY_TLS = {
    "TEMPORAL_TLS_CA": "TEMPORAL_TLS_SERVER_CA_CERT_PATH",
    "TEMPORAL_TLS_CERT": "TEMPORAL_TLS_CLIENT_CERT_PATH",
    "TEMPORAL_TLS_KEY": "TEMPORAL_TLS_CLIENT_KEY_PATH",
}
"""durabench's earlier TLS variables and the ``temporal`` CLI's names for them."""

_EXCERPT = re.compile(r"^(\d+ )?\|")
"""A line of the source excerpt in a TOML parse error (``1 | [profile``, ``|    ^``)."""
_DEFAULT_FILE = "~/.config/temporalio/temporal.toml"


class ConnectOptions(NamedTuple):
    """What a connect call takes besides address and namespace."""

    tls: TLSConfig | bool
    api_key: str | None
    rpc_metadata: Mapping[str, str]


def _temporal_environ() -> dict[str, str]:
    """``TEMPORAL_*`` of ``.env`` under those of the environment, durabench's names mapped."""
    dotenv = dotenv_values(ENV_FILE) if Path(ENV_FILE).is_file() else {}
    found = {k.upper(): v for k, v in dotenv.items() if v and k.upper().startswith("TEMPORAL_")}
    found |= {k: v for k, v in os.environ.items() if v and k.startswith("TEMPORAL_")}
    for ours, theirs in LEGACY_TLS.items():
        if ours in found:
            found.setdefault(theirs, found.pop(ours))
    return found


def load_profile() -> ClientConfigProfile:
    """The Temporal profile of this process, as the ``temporal`` CLI would read it.

    Raises:
        ConfigError: the profile file cannot be read, ``TEMPORAL_CONFIG_FILE`` names a file
            that does not exist, or ``TEMPORAL_PROFILE`` names a profile it does not hold.
    """
    environ = _temporal_environ()
    named = environ.get("TEMPORAL_CONFIG_FILE")
    if named and not Path(named).expanduser().is_file():
        raise ConfigError(
            f"TEMPORAL_CONFIG_FILE names {named}, which does not exist; "
            "point it at the temporal CLI's config file, or unset it"
        )
    try:
        return ClientConfigProfile.load(override_env_vars=environ)
    except RuntimeError as exc:
        raise ConfigError(
            f"cannot read the Temporal profile: {_one_line(exc)}; fix the temporal CLI's "
            f"config file ({named or _DEFAULT_FILE}) or TEMPORAL_PROFILE"
        ) from None


def _one_line(exc: Exception) -> str:
    """The bridge's message without the TOML excerpt it draws over several lines."""
    lines = (line.strip() for line in str(exc).splitlines())
    return " ".join(line for line in lines if line and not _EXCERPT.match(line))


def load_settings() -> Settings:
    """:meth:`Settings.from_env` with the address and namespace of the Temporal profile.

    Raises:
        ConfigError: a setting or the profile is bad; the message says which and where.
    """
    settings = Settings.from_env()
    profile = load_profile()
    return settings.model_copy(
        update={
            "temporal_address": profile.address or settings.temporal_address,
            "namespace": profile.namespace or settings.namespace,
        }
    )


def connect_options(settings: Settings) -> ConnectOptions:
    """TLS, API key and gRPC metadata of the profile; none for the embedded server.

    An API key without TLS settings means TLS with the system's roots (as the CLI does).

    Raises:
        ConfigError: a TLS file cannot be read, or only one of certificate and key is set.
    """
    if not settings.temporal_address:
        return ConnectOptions(False, None, {})
    profile = load_profile()
    tls = profile.tls
    if tls is None:
        return ConnectOptions(bool(profile.api_key), profile.api_key, dict(profile.grpc_meta))
    if (tls.client_cert is None) != (tls.client_private_key is None):
        raise ConfigError(
            "set both a client certificate and its key for mTLS (TEMPORAL_TLS_CERT and "
            "TEMPORAL_TLS_KEY, or the profile's tls.client_cert and tls.client_key), or neither"
        )
    try:
        connect_tls = tls.to_connect_tls_config()
    except OSError as exc:
        raise ConfigError(f"cannot read a Temporal TLS file: {exc}; fix the path") from None
    return ConnectOptions(connect_tls, profile.api_key, dict(profile.grpc_meta))
