from pathlib import Path

import pytest

from durabench.agents import AgentContext, get_agent, known_agents
from durabench.errors import ConfigError, UnknownAgent
from durabench.paths import SandboxPaths
from durabench.tasks import load_suite


def test_oracle_runs_solve_sh_from_the_uploaded_solution() -> None:
    task = load_suite("pytorch")[0]
    oracle = get_agent("oracle")
    uploads = oracle.uploads(task, SandboxPaths())
    assert uploads == [(Path(task.task_dir) / "solution", "/solution")]
    commands = oracle.run_commands(AgentContext(task=task, model="none"))
    assert [c.command for c in commands] == ["bash /solution/solve.sh"]
    assert not oracle.needs_network


def test_oracle_refuses_task_without_solution() -> None:
    task = load_suite("pytorch")[0].model_copy(update={"has_solution": False})
    with pytest.raises(ConfigError, match="solution/solve.sh"):
        get_agent("oracle").check_task(task)


def test_unknown_agent_lists_known() -> None:
    with pytest.raises(UnknownAgent) as err:
        get_agent("claud")
    for name in known_agents():
        assert name in str(err.value)
