"""Sandbox backends, registered by name in one place."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from durabench.errors import UnknownBackend
from durabench.sandbox.base import Sandbox

__all__ = ["get_backend", "known_backends", "sandbox_backend"]

_BACKENDS: dict[str, type[Sandbox]] = {}

_OPTIONAL = {"daytona": ("durabench.sandbox.daytona", "daytona")}
"""Backends registered when first asked for: their module, and the package it needs (an
optional extra), so a process that never uses one never imports its SDK."""


def _load(name: str) -> None:
    module, needs = _OPTIONAL.get(name, ("", ""))
    if module and name not in _BACKENDS and importlib.util.find_spec(needs) is not None:
        importlib.import_module(module)


def sandbox_backend(name: str) -> Callable[[type[Sandbox]], type[Sandbox]]:
    """Class decorator: register a :class:`Sandbox` subclass as backend ``name``."""

    def register(cls: type[Sandbox]) -> type[Sandbox]:
        _BACKENDS[name] = cls
        return cls

    return register


def known_backends() -> list[str]:
    """Names of the backends that can run here (optional ones with their SDK), sorted."""
    ready = {n for n, (_, needs) in _OPTIONAL.items() if importlib.util.find_spec(needs)}
    return sorted(set(_BACKENDS) | ready)


def get_backend(name: str) -> type[Sandbox]:
    """The backend class registered as ``name``.

    Raises:
        UnknownBackend: nothing registered under ``name``; the message lists the known ones.
    """
    _load(name)
    try:
        return _BACKENDS[name]
    except KeyError:
        extra = " (the daytona backend needs `pip install 'durabench[daytona]'`)"
        known = ", ".join(known_backends()) or "none"
        known += extra if name in _OPTIONAL else ""
        raise UnknownBackend(f"unknown sandbox backend {name!r}; known: {known}") from None
