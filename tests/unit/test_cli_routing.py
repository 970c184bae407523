"""Which agent CLI version a run's lanes run: pinned, routed by model, or the adapter's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durabench.agents import get_agent
from durabench.configs import CLI_ROUTES_FILE, cli_route, load_cli_routes
from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.planning.plan import check_request, make_plan
from durabench.settings.values import Settings

LEGACY_MODEL = "claude-3-5-sonnet-20241022"
"""A deprecated snapshot the built-in table routes to a legacy Claude Code."""


def _request(
    agent: str = "claude-code",
    model: str = "claude-haiku-4-5",
    agent_options: dict[str, str] | None = None,
    **kw: object,
) -> RunRequest:
    spec = AgentSpec(name=agent, model=model, options=agent_options or {})
    return RunRequest.model_validate({"run_id": "r", "suite": "pytorch", "agent": spec} | kw)


def _legacy_version() -> str:
    route = cli_route("claude-code", LEGACY_MODEL)
    assert route is not None, "the built-in table lists the legacy snapshot"
    return route.version


def test_the_routing_table_picks_the_legacy_version_for_a_listed_model(tmp_path: Path) -> None:
    legacy = _legacy_version()
    plan = make_plan(
        _request(model=LEGACY_MODEL, agent_options={"effort": "high"}), Settings(home=tmp_path)
    )
    assert plan.request.agent.options == {"version": legacy}  # pinned; --effort left out
    assert plan.cli_version == legacy
    assert "routing table" in plan.cli_version_note and LEGACY_MODEL in plan.cli_version_note
    assert any("--effort" in w and legacy in w for w in plan.warnings)


def test_an_explicit_version_overrides_the_routing_table(tmp_path: Path) -> None:
    request = _request(model=LEGACY_MODEL, agent_options={"version": "2.0.14", "effort": "low"})
    plan = make_plan(request, Settings(home=tmp_path))
    assert plan.request.agent.options == {"version": "2.0.14", "effort": "low"}
    assert plan.cli_version == "2.0.14" and "--agent-opt version" in plan.cli_version_note


def test_a_pinned_legacy_version_leaves_out_the_options_it_lacks_too(tmp_path: Path) -> None:
    legacy = _legacy_version()
    request = _request(agent_options={"version": legacy, "effort": "high"})
    plan = make_plan(request, Settings(home=tmp_path))
    assert plan.request.agent.options == {"version": legacy}
    assert any(f"claude-code {legacy} has no --effort" in w for w in plan.warnings)


def test_an_unlisted_model_runs_the_adapters_version_pinned_only_when_official(
    tmp_path: Path,
) -> None:
    staging = make_plan(_request(), Settings(home=tmp_path))
    assert staging.cli_version == "2.1.332" and staging.request.agent.options == {}
    assert "task image's own `claude`" in staging.cli_version_note
    official = make_plan(_request(category="official"), Settings(home=tmp_path))
    assert official.request.agent.options == {"version": "2.1.332"}  # never the image's
    install = get_agent("claude-code", official.request.agent.options).install_spec()
    assert install.pinned  # installed even where a task image has a `claude` of its own
    assert official.cli_version == "2.1.332" and "official" in official.cli_version_note


@pytest.mark.parametrize("version", ["latest", "next", "^2.1.0", "2.x"])
def test_an_official_run_refuses_a_version_that_names_nothing(tmp_path: Path, version: str) -> None:
    request = _request(category="official", agent_options={"version": version})
    with pytest.raises(ConfigError, match="is not a plain version"):
        check_request(request, Settings(home=tmp_path))  # before `starter run` starts it
    with pytest.raises(ConfigError, match="is not a plain version"):
        make_plan(request, Settings(home=tmp_path))


def test_agents_that_are_no_cli_have_no_version(tmp_path: Path) -> None:
    plan = make_plan(_request(agent="oracle", model="none"), Settings(home=tmp_path))
    assert plan.cli_version is None and plan.request.agent.options == {}


def test_a_route_with_a_version_npm_would_resolve_anew_is_refused(tmp_path: Path) -> None:
    doc = json.loads(CLI_ROUTES_FILE.read_text())
    doc["routes"][0]["version"] = "latest"
    bad = tmp_path / "routes.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"routes.json.*'latest' is not a plain version"):
        load_cli_routes(bad)


def test_the_plan_shows_the_cli_version_both_lanes_run(tmp_path: Path) -> None:
    from rich.console import Console

    from starter.console import plan_table

    plan = make_plan(_request(model=LEGACY_MODEL), Settings(home=tmp_path))
    out = Console(width=400, record=True)
    out.print(plan_table(plan.summary()))
    table = out.export_text()
    row = next(line for line in table.splitlines() if "agent CLI version" in line)
    assert f"│ {_legacy_version()} (routing table: {LEGACY_MODEL}" in row


def test_a_team_registry_adds_routes_ahead_of_the_built_in_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from durabench.configs.cli_routes import _routes
    from durabench.configs.lane_configs import REGISTRY_ENV, _registry

    team = tmp_path / "registry.json"
    routes = [
        {"agent": "codex-cli", "models": ["gpt-4.1-2025-04-14"], "version": "0.20.0"},
        {"agent": "claude-code", "models": [LEGACY_MODEL], "version": "1.0.100"},
    ]
    team.write_text(json.dumps({"configs": [], "cli_routes": routes}))
    monkeypatch.setenv(REGISTRY_ENV, str(team))
    _routes.cache_clear()
    _registry.cache_clear()
    try:
        assert cli_route("codex-cli", "gpt-4.1-2025-04-14").version == "0.20.0"  # type: ignore[union-attr]
        assert cli_route("claude-code", LEGACY_MODEL).version == "1.0.100"  # type: ignore[union-attr]
        assert cli_route("codex-cli", "gpt-5-codex") is None
    finally:
        monkeypatch.delenv(REGISTRY_ENV)
        _routes.cache_clear()
        _registry.cache_clear()
