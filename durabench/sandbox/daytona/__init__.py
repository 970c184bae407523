"""The Daytona sandbox backend: remote sandboxes through the official ``daytona`` SDK."""

from durabench.sandbox.daytona.client import DaytonaOptions, close_clients
from durabench.sandbox.daytona.remote_gateway import allow_list_for, checked_public_url
from durabench.sandbox.daytona.sandbox import DaytonaSandbox
from durabench.sandbox.daytona.sweep import listed_sandboxes, remove_sandboxes

__all__ = [
    "DaytonaOptions",
    "DaytonaSandbox",
    "allow_list_for",
    "checked_public_url",
    "close_clients",
    "listed_sandboxes",
    "remove_sandboxes",
]
