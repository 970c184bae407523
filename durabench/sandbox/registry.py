"""Sandbox backends, registered by name in one place."""

from __future__ import annotations

from collections.abc import Callable

from durabench.errors import UnknownBackend
from durabench.sandbox.base import Sandbox

__all__ = ["get_backend", "known_backends", "sandbox_backend"]

_BACKENDS: dict[str, type[Sandbox]] = {}


def sandbox_backend(name: str) -> Callable[[type[Sandbox]], type[Sandbox]]:
    """Class decorator: register a :class:`Sandbox` subclass as backend ``name``."""

    def register(cls: type[Sandbox]) -> type[Sandbox]:
        _BACKENDS[name] = cls
        return cls

    return register


def known_backends() -> list[str]:
    """Names of the registered backends, sorted."""
    return sorted(_BACKENDS)


def get_backend(name: str) -> type[Sandbox]:
    """The backend class registered as ``name``.

    Raises:
        UnknownBackend: nothing registered under ``name``; the message lists the known ones.
    """
    try:
        return _BACKENDS[name]
    except KeyError:
        known = ", ".join(known_backends()) or "none"
        raise UnknownBackend(f"unknown sandbox backend {name!r}; known: {known}") from None
