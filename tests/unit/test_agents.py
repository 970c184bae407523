import json
from pathlib import Path

import pytest

from durabench.agents import AgentContext, ReplayAgent, get_agent, known_agents
from durabench.errors import ConfigError, UnknownAgent
from durabench.tasks import load_suite


def _ctx(lane: str = "baseline", attempt: int = 1) -> AgentContext:
    return AgentContext(task=load_suite("pytorch")[0], model="m", lane=lane, attempt=attempt)


def test_oracle_runs_solve_sh_from_the_uploaded_solution() -> None:
    ctx = _ctx()
    oracle = get_agent("oracle")
    assert oracle.uploads(ctx) == [(Path(ctx.task.task_dir) / "solution", "/solution")]
    assert [c.command for c in oracle.run_commands(ctx)] == ["bash /solution/solve.sh"]
    assert not oracle.needs_network and not oracle.uses_mcp
    assert oracle.transcript_format(ctx) is None


def test_oracle_refuses_task_without_solution() -> None:
    task = load_suite("pytorch")[0].model_copy(update={"has_solution": False})
    with pytest.raises(ConfigError, match="solution/solve.sh"):
        get_agent("oracle").check_task(task)


def test_unknown_agent_lists_known() -> None:
    with pytest.raises(UnknownAgent) as err:
        get_agent("claud")
    for name in known_agents():
        assert name in str(err.value)


def _plan(tmp_path: Path, cases: list[dict[str, object]]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "t.jsonl").write_text('{"type": "result"}\n')
    (tmp_path / "fix.py").write_text("x = 1\n")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"cases": cases}))
    return plan


def test_replay_plays_the_first_matching_case(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path,
        [
            {"lane": "baseline", "attempt": 1, "transcript": "t.jsonl", "exit_code": 1},
            {"format": "codex-cli", "files": {"pkg/fix.py": "fix.py"}, "echo_env": ["TOKEN"]},
        ],
    )
    replay = get_agent("replay", {"plan": str(plan)})
    assert isinstance(replay, ReplayAgent) and replay.uses_mcp
    first, other = _ctx("baseline", 1), _ctx("baseline", 2)
    assert replay.uploads(first) == [(tmp_path / "t.jsonl", "/durabench/agent/transcript.jsonl")]
    [cmd] = replay.run_commands(first)
    assert cmd.command == "cat /durabench/agent/transcript.jsonl; exit 1"
    assert replay.transcript_format(first) == "claude-code"
    assert replay.uploads(other) == [(tmp_path / "fix.py", "/durabench/agent/files/pkg/fix.py")]
    [cmd] = replay.run_commands(other)
    assert cmd.command == (
        'echo "TOKEN=${TOKEN}"; cp -R /durabench/agent/files/. /workspace/; exit 0'
    )
    assert replay.transcript_format(other) == "codex-cli"


def test_replay_hangs_when_told(tmp_path: Path) -> None:
    replay = get_agent("replay", {"plan": str(_plan(tmp_path, [{"hang": True}]))})
    [cmd] = replay.run_commands(_ctx())
    assert "sleep 2147483647" in cmd.command


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({}, "needs a plan"),
        ({"plan": "/nonexistent/plan.json"}, "/nonexistent/plan.json"),
    ],
)
def test_replay_option_errors(options: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        get_agent("replay", options)


def test_replay_plan_naming_a_missing_file_or_matching_nothing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="gone.jsonl does not exist"):
        get_agent("replay", {"plan": str(_plan(tmp_path, [{"transcript": "gone.jsonl"}]))})
    replay = get_agent("replay", {"plan": str(_plan(tmp_path, [{"lane": "other"}]))})
    with pytest.raises(ConfigError, match="no case for task"):
        replay.run_commands(_ctx())


@pytest.mark.parametrize(
    ("case", "named"),
    [
        ({"transcript": "../secret.jsonl"}, "transcript '../secret.jsonl'"),
        ({"transcript": "/etc/passwd"}, "transcript '/etc/passwd'"),
        ({"files": {"notes.md": "../secret.jsonl"}}, "file '../secret.jsonl'"),
        ({"files": {"notes.md": "sub/../../secret.jsonl"}}, "file 'sub/../../secret.jsonl'"),
        ({"files": {"notes.md": "/etc/passwd"}}, "file '/etc/passwd'"),
    ],
)
def test_replay_plan_reading_outside_its_directory_is_refused(
    tmp_path: Path, case: dict[str, object], named: str
) -> None:
    (tmp_path / "secret.jsonl").write_text("{}\n")
    plan = _plan(tmp_path / "plan", [{"transcript": "t.jsonl"}, case])
    with pytest.raises(ConfigError) as err:
        get_agent("replay", {"plan": str(plan)})
    assert f"case 2 names {named}" in str(err.value)
    assert "beside the plan" in str(err.value)


def test_replay_plan_reading_through_a_link_out_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.jsonl").write_text("{}\n")
    plan = _plan(tmp_path / "plan", [{"transcript": "t.jsonl"}])
    (tmp_path / "plan" / "t.jsonl").unlink()
    (tmp_path / "plan" / "t.jsonl").symlink_to(tmp_path / "secret.jsonl")
    with pytest.raises(ConfigError, match="case 1 names transcript 't.jsonl'"):
        get_agent("replay", {"plan": str(plan)})


@pytest.mark.parametrize("dest", ["../x", "a/../../x", "/etc/cron.d/x", "", ".", "a\0b"])
def test_replay_plan_writing_outside_the_workspace_is_refused(tmp_path: Path, dest: str) -> None:
    plan = _plan(tmp_path, [{"files": {dest: "fix.py"}}])
    with pytest.raises(ConfigError) as err:
        get_agent("replay", {"plan": str(plan)})
    assert f"case 1 writes to workspace path {dest!r}" in str(err.value)
    assert "relative path inside the workspace" in str(err.value)


def test_the_oracle_runs_as_the_agent_user_when_asked() -> None:
    task = load_suite("pytorch")[0]
    ctx = AgentContext(task=task, model="none")
    plain, unprivileged = get_agent("oracle"), get_agent("oracle", {"user": "agent"})
    assert plain.run_commands(ctx)[0].user is None and plain.setup_commands(ctx) == []
    assert unprivileged.run_commands(ctx)[0].user == "agent"
    assert "chown" in unprivileged.setup_commands(ctx)[0].command
    with pytest.raises(ConfigError, match="only --agent-opt user=agent"):
        get_agent("oracle", {"user": "root"})
