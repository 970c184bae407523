"""The model gateway: the only way an agent reaches a model, and the meter of record.

Keys stay on the worker: an agent gets a placeholder good only at its host's gateway,
which swaps in the real key on the way out and records what the API answered.
"""

from durabench.gateway.grants import TOKEN_PREFIX, Grant, GrantStore
from durabench.gateway.ledger import LedgerEntry, read_ledger
from durabench.gateway.limits import GatewayLimits
from durabench.gateway.meter import ResponseMeter, ResponseUsage
from durabench.gateway.model_gateway import ModelGateway
from durabench.gateway.network import ensure_gateway_network
from durabench.gateway.providers import PROVIDERS, Provider
from durabench.gateway.room_book import read_rooms

__all__ = [
    "PROVIDERS",
    "TOKEN_PREFIX",
    "GatewayLimits",
    "Grant",
    "GrantStore",
    "LedgerEntry",
    "ModelGateway",
    "Provider",
    "ResponseMeter",
    "ResponseUsage",
    "ensure_gateway_network",
    "read_ledger",
    "read_rooms",
]
