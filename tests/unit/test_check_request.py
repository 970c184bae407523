"""What the CLI refuses before a run starts, and what it leaves to the workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.errors import ConfigError, UnknownAgent, UnknownConfig, UnknownSuite
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.planning.plan import check_request
from durabench.settings.values import Settings


def test_names_only_workers_may_know_are_theirs_to_refuse_when_detached(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    theirs = [
        RunRequest(run_id="r", suite="team-suite"),
        RunRequest(run_id="r", suite="pytorch", full_config="team_config"),
    ]
    for request in theirs:
        check_request(request, settings, here=False)  # remote workers may know them
    with pytest.raises(UnknownSuite):
        check_request(theirs[0], settings)
    with pytest.raises(UnknownConfig):
        check_request(theirs[1], settings)


def test_what_is_wrong_anywhere_is_refused_detached_too(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with pytest.raises(ConfigError, match="is not a model id"):
        check_request(
            RunRequest(run_id="r", suite="x", agent=AgentSpec(model="Big Model")),
            settings,
            here=False,
        )
    with pytest.raises(UnknownAgent):
        check_request(
            RunRequest(run_id="r", suite="x", agent=AgentSpec(name="nope")), settings, here=False
        )
    with pytest.raises(ConfigError, match="calls a model"):
        check_request(
            RunRequest(run_id="r", suite="x", agent=AgentSpec(name="claude-code")), settings
        )
    missing = str(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="cannot read it"):
        check_request(RunRequest(run_id="r", suite="", selection=missing), settings, here=False)
    check_request(RunRequest(run_id="r", suite="x", rerun="all", rerun_of="old"), settings)
