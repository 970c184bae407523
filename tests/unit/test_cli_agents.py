"""The CLI adapters build the exact command lines, users and MCP files each CLI reads."""

from __future__ import annotations

import json
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from durabench.agents import (
    AGENT_UID,
    AGENT_USER,
    AgentContext,
    CliAgent,
    agent_secret_env,
    get_agent,
)
from durabench.configs import get_config, mcp_config_json
from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.config import McpServer
from durabench.models.run import RunRequest
from durabench.planning.plan import make_plan
from durabench.settings.values import Settings
from durabench.tasks import load_suite

FULL = "sourcegraph_full"
PROMPT = '"$(cat /durabench/instruction.md)"'


def _ctx(lane: str = "baseline", url: str = "https://sg.example") -> AgentContext:
    mcp = get_config(lane).mcp
    return AgentContext(
        task=load_suite("pytorch")[0],
        model="claude-haiku-4-5",
        lane=lane,
        has_mcp_config=mcp is not None,
        mcp=mcp,
        mcp_url=url if mcp else "",
    )


def _cli(name: str, **options: str) -> CliAgent:
    adapter = get_agent(name, options)
    assert isinstance(adapter, CliAgent)
    return adapter


def test_claude_code_command_line_per_lane() -> None:
    claude = _cli("claude-code", effort="high")
    [base] = claude.run_commands(_ctx())
    [full] = claude.run_commands(_ctx(FULL))
    head = (
        "claude --print --verbose --output-format stream-json --model claude-haiku-4-5 "
        "--effort high --dangerously-skip-permissions"
    )
    assert base.command == f"{head} -- {PROMPT}"
    assert full.command == f"{head} --mcp-config /durabench/mcp.json -- {PROMPT}"
    assert base.user == full.user == AGENT_USER
    assert base.env["HOME"] == "/home/agent"
    assert int(base.env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"]) >= 64000
    assert claude.transcript_format(_ctx()) == "claude-code"
    assert claude.config_files(_ctx(FULL)) == {}  # it reads the lane's mcp.json


def test_codex_cli_command_line_and_config_toml() -> None:
    codex = _cli("codex-cli", effort="medium")
    [base] = codex.run_commands(_ctx())
    assert shlex.split(base.command)[:-1] == [
        'OPENAI_API_KEY=${OPENAI_API_KEY:-${CODEX_API_KEY:-}}',
        "codex", "exec", "--json", "--model", "claude-haiku-4-5",
        "-c", 'model_providers.durabench.base_url="${OPENAI_BASE_URL:-https://api.openai.com/v1}"',
        "-c", "model_reasoning_effort=medium",
        "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "--",
    ]  # fmt: skip
    assert base.command.endswith(f"-- {PROMPT}")
    # Its own provider on every lane: the Responses API over HTTP, the key as a bearer.
    [(path, text)] = codex.config_files(_ctx()).items()
    assert path == base.env["CODEX_HOME"] + "/config.toml"
    config = tomllib.loads(text)
    assert config["model_provider"] == "durabench"
    assert config["model_providers"]["durabench"] == {
        "name": "durabench model gateway",
        "env_key": "OPENAI_API_KEY",
        "wire_api": "responses",
        "supports_websockets": False,
    }
    assert "mcp_servers" not in config
    [(path, text)] = codex.config_files(_ctx(FULL)).items()
    server = tomllib.loads(text)["mcp_servers"]["sourcegraph"]
    assert server == {
        "url": "https://sg.example/.api/mcp/v1",
        "env_http_headers": {"Authorization": "DURABENCH_MCP_AUTH_HEADER"},
    }
    values = {"SOURCEGRAPH_ACCESS_TOKEN": "sgp_secret", "SOURCEGRAPH_URL": "https://sg.example"}
    assert codex.derived_env(_ctx(FULL), values) == {
        "DURABENCH_MCP_AUTH_HEADER": "token sgp_secret"
    }
    assert codex.derived_env(_ctx(), {}) == {}


def test_the_codex_and_gemini_command_lines_find_their_key_and_base_url() -> None:
    """The shell puts the placeholder where each CLI reads it, whichever variable it
    came in, and hands Codex the base URL it was given."""
    for name, variable, other in (
        ("codex-cli", "OPENAI_API_KEY", "CODEX_API_KEY"),
        ("gemini-cli", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ):
        [run] = _cli(name).run_commands(_ctx())
        line = run.command.split(" -- ")[0].split(" --prompt ")[0]
        probe = f"{line.split(' ', 1)[0]} sh -c 'echo \"${variable}\"'"
        env = {other: "dbgw-placeholder", "PATH": "/usr/bin:/bin"}
        out = subprocess.run(["sh", "-c", probe], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == "dbgw-placeholder", name
    [run] = _cli("codex-cli").run_commands(_ctx())
    words = run.command.split(" codex ", 1)[1].split(" -- ")[0]
    env = {"OPENAI_BASE_URL": "http://gw:9/openai/v1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {words}"], env=env, capture_output=True, text=True
    )
    assert 'model_providers.durabench.base_url="http://gw:9/openai/v1"' in out.stdout.split("\n")


def test_gemini_cli_command_line_and_settings() -> None:
    gemini = _cli("gemini-cli")
    [base] = gemini.run_commands(_ctx())
    assert base.command == (
        'GEMINI_API_KEY="${GEMINI_API_KEY:-${GOOGLE_API_KEY:-}}" '
        f"gemini --output-format stream-json --model claude-haiku-4-5 --yolo --prompt {PROMPT}"
    )
    # Every lane: the API key auth (not the "gateway" type it would pick and refuse),
    # trusted (so --yolo holds), nothing reported home.
    [(path, text)] = gemini.config_files(_ctx()).items()
    assert path == "/home/agent/.gemini/settings.json"
    settings = json.loads(text)
    assert settings["security"] == {
        "auth": {"selectedType": "gemini-api-key"},
        "folderTrust": {"enabled": False},
    }
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert "mcpServers" not in settings
    [(path, text)] = gemini.config_files(_ctx(FULL)).items()
    entry = json.loads(text)["mcpServers"]["sourcegraph"]
    assert entry == {
        "httpUrl": "${SOURCEGRAPH_URL}/.api/mcp/v1",
        "headers": {"Authorization": "token ${SOURCEGRAPH_ACCESS_TOKEN}"},
    }
    with pytest.raises(ConfigError, match="no reasoning-effort"):
        get_agent("gemini-cli", {"effort": "high"})


@pytest.mark.parametrize("name", ["claude-code", "codex-cli", "gemini-cli"])
def test_every_cli_runs_as_agent_after_a_root_setup(name: str) -> None:
    adapter = _cli(name)
    assert adapter.needs_network and adapter.uses_mcp and adapter.requires_model
    [setup] = adapter.setup_commands(_ctx())
    assert setup.user == "0"
    assert "/etc/passwd" in setup.command and f":{AGENT_UID}:{AGENT_UID}:" in setup.command
    assert "/workspace" in setup.command
    install = adapter.install_spec()
    words = [w for w in adapter.run_commands(_ctx())[0].command.split() if "=" not in w]
    assert words[0] == install.binary
    assert all("@" in p.lstrip("@") for p in install.packages)  # pinned
    pinned = _cli(name, version="1.2.3").install_spec()
    assert pinned.packages == (f"{adapter.package}@1.2.3",) and pinned.key != install.key


def test_cli_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="does not take --agent-opt plan.*effort, max_output"):
        get_agent("claude-code", {"plan": "x"})


def test_agent_keys_are_scrubbed_secrets() -> None:
    names = agent_secret_env()
    for name in (
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
    ):
        assert name in names
    assert "ANTHROPIC_BASE_URL" not in names  # a setting, passed through but not secret


def test_a_command_mcp_server_in_each_dialect() -> None:
    server = McpServer(name="local", token_env="LOCAL_TOKEN", command=("mcp-local", "--stdio"))
    assert json.loads(mcp_config_json(server))["mcpServers"]["local"] == {
        "type": "stdio",
        "command": "mcp-local",
        "args": ["--stdio"],
        "env": {"LOCAL_TOKEN": "${LOCAL_TOKEN}"},
    }
    ctx = _ctx().model_copy(update={"mcp": server, "has_mcp_config": True})
    [(_, toml)] = _cli("codex-cli").config_files(ctx).items()
    assert tomllib.loads(toml)["mcp_servers"]["local"] == {
        "command": "mcp-local",
        "args": ["--stdio"],
        "env_vars": ["LOCAL_TOKEN"],
    }
    with pytest.raises(ValueError, match="exactly one of url_env"):
        McpServer(name="x", token_env="T")


def test_a_cli_agent_without_a_model_is_refused_at_plan_time(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    request = RunRequest(run_id="r", suite="pytorch", agent=AgentSpec(name="claude-code"))
    with pytest.raises(ConfigError, match="calls a model: name it with --model"):
        make_plan(request, settings)
    haiku = request.agent.model_copy(update={"model": "claude-haiku-4-5"})
    plan = make_plan(request.model_copy(update={"agent": haiku}), settings)
    assert plan.request.agent.name == "claude-code"


def test_an_instruction_too_long_for_one_argument_is_refused(tmp_path: Path) -> None:
    task = load_suite("pytorch")[0].model_copy(update={"task_dir": str(tmp_path)})
    (tmp_path / "instruction.md").write_text("fix it\n")
    get_agent("claude-code").check_task(task)
    (tmp_path / "instruction_mcp.md").write_text("x" * 130_000)
    with pytest.raises(ConfigError, match="instruction_mcp.md is 130,000 bytes.*shorten it"):
        get_agent("codex-cli").check_task(task)


def test_only_an_explicit_version_is_pinned() -> None:
    assert not _cli("claude-code").install_spec().pinned
    assert _cli("claude-code", version="2.0.0").install_spec().pinned


def test_npm_sees_the_hosts_ca_settings_and_never_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from durabench.sandbox.docker.agent_images import _npm_env

    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", "/etc/proxy-ca.pem")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-to-npm")
    env = _npm_env()
    assert env["NODE_EXTRA_CA_CERTS"] == "/etc/proxy-ca.pem"  # a TLS-inspecting proxy's CA
    assert "ANTHROPIC_API_KEY" not in env
