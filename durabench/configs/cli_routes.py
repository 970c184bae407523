"""The routing table: models that need a particular agent CLI generation.

An agent CLI is part of the system under test, and deprecated model snapshots are only
served by older CLI generations; ``cli_routes.json`` maps such models to the CLI version
they run (and the options that version lacks). A team's registry file
(``DURABENCH_CONFIG_REGISTRY``, durabench's shape) may add routes under ``"cli_routes"``;
they come first. ``--agent-opt version=V`` overrides any route.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel

from durabench.agents.cli_version import is_plain_version
from durabench.documents import loads_json
from durabench.errors import ConfigError
from durabench.models.config import CliRoute
from durabench.settings.environment import config_registry_file

__all__ = ["CLI_ROUTES_FILE", "cli_lacks", "cli_route", "load_cli_routes"]

CLI_ROUTES_FILE = Path(__file__).resolve().parent / "cli_routes.json"


class _Routes(BaseModel):
    routes: list[CliRoute]


def load_cli_routes(path: Path = CLI_ROUTES_FILE) -> tuple[CliRoute, ...]:
    """The routes of ``path`` (``{"routes": [...]}``), each version checked.

    Raises:
        ConfigError: the file cannot be read, or a route's version is not a plain version.
    """
    try:
        doc = loads_json(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"CLI routing table {path} cannot be read: {exc}") from exc
    return load_cli_routes_doc(doc, path)


def _checked(route: CliRoute, source: Path) -> CliRoute:
    if not is_plain_version(route.version):
        raise ConfigError(
            f"CLI routing table {source}: {route.agent} version {route.version[:40]!r} is not a "
            "plain version; name one release, such as 1.0.128 (a tag is resolved anew each "
            "install, so results could not name what they measured)"
        )
    return route


def _team_routes(path: Path) -> tuple[CliRoute, ...]:
    try:
        doc = loads_json(path.read_text())
    except (OSError, ValueError):
        return ()  # the config registry reports an unreadable file itself
    if not isinstance(doc, dict) or "cli_routes" not in doc:
        return ()
    return load_cli_routes_doc({"routes": doc["cli_routes"]}, path)


def load_cli_routes_doc(doc: object, source: Path) -> tuple[CliRoute, ...]:
    """Routes from a parsed document (see :func:`load_cli_routes`)."""
    try:
        routes = _Routes.model_validate(doc).routes
    except ValueError as exc:
        raise ConfigError(f"CLI routes in {source} cannot be read: {exc}") from exc
    return tuple(_checked(r, source) for r in routes)


@cache
def _routes() -> tuple[CliRoute, ...]:
    extra = config_registry_file()
    team = _team_routes(extra) if extra else ()
    return (*team, *load_cli_routes())


def cli_route(agent: str, model: str) -> CliRoute | None:
    """The route of ``agent`` running ``model``, or ``None`` when no route lists it."""
    return next((r for r in _routes() if r.agent == agent and model in r.models), None)


def cli_lacks(agent: str, version: str) -> tuple[str, ...]:
    """The options ``agent`` at ``version`` does not take, as the routing table says."""
    return tuple(
        dict.fromkeys(
            o for r in _routes() if (r.agent, r.version) == (agent, version) for o in r.lacks
        )
    )
