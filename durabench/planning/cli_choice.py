"""The agent CLI version a run's lanes run, chosen once, when the plan is made.

In order: ``--agent-opt version=V``; the routing table for the model
(:mod:`durabench.configs.cli_routes`), whose version goes into the run's agent options;
the adapter's own version. Options the table says a version lacks are left out. Both
lanes take the same options, so a pinned version is the one both run. An official run
always pins it: a published number names the version it measured, never whatever CLI a
task image carries. A staging run on the adapter's version uses a task image's own CLI
where it has one; the attempt records which version ran either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from durabench.agents import Agent, CliAgent
from durabench.configs import cli_lacks, cli_route
from durabench.errors import ConfigError
from durabench.results.earlier_runs import OtherVersion

__all__ = ["CliChoice", "choose_cli", "other_versions", "rerun_options"]


class CliChoice(NamedTuple):
    """The CLI version a run's lanes run, why, and the agent options that make it so."""

    version: str | None
    """The version; ``None`` for an agent that is no CLI (oracle, replay, nop)."""
    note: str
    """Where the version comes from, in words the plan shows."""
    options: dict[str, str]
    """The run's agent options: with ``version`` when it is pinned."""
    left_out: tuple[str, ...]
    """Options the routed version does not take, left out of the run."""


def choose_cli(
    agent: type[Agent], model: str, options: Mapping[str, str], category: str
) -> CliChoice:
    """The CLI version ``agent`` runs for ``model`` in a run of ``category``."""
    if not issubclass(agent, CliAgent):
        return CliChoice(None, "", dict(options), ())
    pinned = options.get("version")
    if pinned:
        return _without(pinned, "--agent-opt version", options, cli_lacks(agent.name, pinned))
    route = cli_route(agent.name, model)
    if route is not None:
        why = f"; {route.why}" if route.why else ""
        note = f"routing table: {model} runs {agent.name} {route.version}{why}"
        return _without(route.version, note, options, route.lacks)
    if category == "official":
        return CliChoice(
            agent.version,
            f"{agent.name}'s own version, installed in every lane (an official run never "
            "uses a task image's own CLI)",
            {**options, "version": agent.version},
            (),
        )
    return CliChoice(
        agent.version,
        f"{agent.name}'s own version; a task image's own `{agent.binary}` runs instead where "
        "it has one (each result records which ran; pin one with --agent-opt version=V)",
        dict(options),
        (),
    )


def _without(
    version: str, note: str, options: Mapping[str, str], lacks: tuple[str, ...]
) -> CliChoice:
    """``version`` pinned, and the options it lacks left out."""
    kept = {k: v for k, v in options.items() if k not in lacks}
    return CliChoice(
        version, note, kept | {"version": version}, tuple(k for k in options if k in lacks)
    )


def rerun_options(
    agent: type[Agent], options: Mapping[str, str], ran: tuple[str, ...], original: str
) -> dict[str, str]:
    """A rerun's agent options: pinned to the one CLI version its original run ran.

    Raises:
        ConfigError: the original ran several versions, or not the one its options pin.
    """
    pinned = options.get("version")
    if not issubclass(agent, CliAgent) or not ran or (pinned and ran == (pinned,)):
        return dict(options)
    if len(ran) > 1 or pinned:
        said = " and ".join(ran) + (f", not the {pinned} it pinned" if pinned else "")
        raise ConfigError(
            f"run {original} ran {agent.name} {said}: a rerun would mix CLI versions with "
            "it. Run its tasks anew (paired) with one --agent-opt version=V"
        )
    return {**options, "version": ran[0]}


def other_versions(
    agent: str, version: str | None, other: Mapping[str, OtherVersion], shown: int
) -> str:
    """Counterparts that ran another CLI version than ``version``, named (up to ``shown``)."""
    if not other:
        return ""
    named = [
        f"{task} in run {o.run_id} ran {agent} {o.version or 'an unrecorded version'}"
        for task, o in sorted(other.items())
    ]
    more = f" and {len(named) - shown} more" if len(named) > shown else ""
    return f"{'; '.join(named[:shown])}{more}; this run would run {version}"
