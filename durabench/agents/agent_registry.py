"""Agent adapters, registered by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from durabench.agents.base import Agent
from durabench.errors import UnknownAgent

__all__ = ["agent", "agent_class", "agent_secret_env", "get_agent", "known_agents"]

_AGENTS: dict[str, type[Agent]] = {}


def agent(name: str) -> Callable[[type[Agent]], type[Agent]]:
    """Class decorator: register an :class:`Agent` subclass as ``name``."""

    def register(cls: type[Agent]) -> type[Agent]:
        cls.name = name
        _AGENTS[name] = cls
        return cls

    return register


def known_agents() -> list[str]:
    """Names of the registered agents, sorted."""
    return sorted(_AGENTS)


def agent_secret_env() -> tuple[str, ...]:
    """Every secret variable any registered agent is handed: all of them are scrubbed."""
    return tuple(sorted({name for cls in _AGENTS.values() for name in cls.secret_env}))


def get_agent(name: str, options: Mapping[str, str] | None = None) -> Agent:
    """A new adapter for agent ``name`` with the run's agent ``options``.

    Raises:
        UnknownAgent: no adapter of that name; the message lists the known ones.
        ConfigError: the options are wrong for that agent.
    """
    return agent_class(name)(options)


def agent_class(name: str) -> type[Agent]:
    """The adapter class registered as ``name`` (its class facts, without options).

    Raises:
        UnknownAgent: no adapter of that name; the message lists the known ones.
    """
    try:
        return _AGENTS[name]
    except KeyError:
        known = ", ".join(known_agents())
        raise UnknownAgent(f"unknown agent {name!r}; known agents: {known}") from None
