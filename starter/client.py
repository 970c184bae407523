"""Connecting to Temporal: the embedded server or ``TEMPORAL_ADDRESS``, same converter."""

from __future__ import annotations

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.service import RPCError

from durabench.errors import ConfigError
from durabench.settings import Settings
from starter.embedded import ensure_server
from workflows.search_attributes import SEARCH_ATTRIBUTES

__all__ = ["connect", "ensure_search_attributes"]


async def ensure_search_attributes(client: Client) -> None:
    """Register durabench's search attributes where they are missing (idempotent)."""
    ops = client.operator_service
    listed = await ops.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace)
    )
    missing = {
        key.name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
        for key in SEARCH_ATTRIBUTES
        if key.name not in listed.custom_attributes
    }
    if missing:
        await ops.add_search_attributes(
            AddSearchAttributesRequest(namespace=client.namespace, search_attributes=missing)
        )


async def connect(settings: Settings | None = None) -> Client:
    """A client for durabench's Temporal, starting the embedded server if needed.

    Raises:
        ConfigError: the server cannot be reached or started.
    """
    settings = settings or Settings.from_env()
    address = await ensure_server(settings)
    try:
        client = await Client.connect(
            address, namespace=settings.namespace, data_converter=pydantic_data_converter
        )
        await ensure_search_attributes(client)
    except (RuntimeError, RPCError) as exc:
        fix = (
            "fix TEMPORAL_ADDRESS, or unset it to use the embedded server"
            if settings.temporal_address
            else f"something that is not a Temporal server holds port {settings.port}: stop it, "
            "or set DURABENCH_PORT to another port"
        )
        raise ConfigError(
            f"cannot use Temporal at {address} (namespace {settings.namespace}): {exc}; {fix}"
        ) from exc
    return client
