"""The agent CLIs through the real pipeline, without reaching any model API.

Stand-in executables named ``claude``, ``codex`` and ``gemini`` sit on the task image's
PATH. Each records what it was given (its arguments, the names of its variables, a hash of
each key it got, its user, its network interfaces, the config files it can see) and prints
a short recorded transcript. The last test installs the real Claude Code from npm and runs
it with no credentials and no network: it must end as infrastructure, never as the model.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from durabench.models import RunRequest
from durabench.settings import Settings
from durabench.tasks import load_suite
from tests.integration.runs import finished_run, stand_in_task
from workflows import attempt_workflow_id, pair_workflow_id, run_workflow_id

pytestmark = pytest.mark.docker

FULL = "sourcegraph_full"
MODEL = "claude-haiku-4-5"
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "SOURCEGRAPH_ACCESS_TOKEN")
TRANSCRIPTS = {
    "claude": [
        {"type": "system", "subtype": "init", "model": MODEL},
        {"type": "result", "subtype": "success", "is_error": False, "result": "Left a note."},
    ],
    "codex": [
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Left a note."}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 2}},
    ],
    "gemini": [
        {"type": "init", "model": MODEL},
        {"type": "message", "role": "assistant", "content": "Left a note."},
        {"type": "result", "status": "success"},
    ],
}
STAND_IN = """#!/bin/sh
# A stand-in agent CLI: records what it was given, prints a recorded transcript.
rec=/logs/agent/stand-in
mkdir -p "$rec"
for arg in "$@"; do printf '%s\\n---\\n' "$arg"; done > "$rec/argv"
env | cut -d= -f1 | sort > "$rec/env-names"
for name in {keys}; do
  eval "value=\\${{$name:-}}"
  [ -n "$value" ] && printf '%s %s\\n' "$name" "$(printf %s "$value" | sha256sum | cut -c1-64)"
done > "$rec/key-hashes"
id -un > "$rec/user"
ls /sys/class/net > "$rec/net"
for f in /durabench/mcp.json "$HOME/.codex/config.toml" "$HOME/.gemini/settings.json"; do
  [ -f "$f" ] && echo "$f"
done > "$rec/config-files"
echo "a note from $(basename "$0")" > /workspace/NOTES.md
cat /opt/stand-in/$(basename "$0").jsonl
"""


def _write_suite(home: Path) -> None:
    """One task whose image has the three stand-ins on PATH."""
    script = STAND_IN.format(keys=" ".join(KEYS))
    stand_in_task(home, "clis", "cli-001", dict.fromkeys(TRANSCRIPTS, script), TRANSCRIPTS)


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


async def _histories(client: Client, run_id: str, lanes: tuple[str, ...]) -> str:
    ids = [run_workflow_id(run_id), pair_workflow_id(run_id, "cli-001")]
    ids += [attempt_workflow_id(run_id, "cli-001", lane, 1) for lane in lanes]
    return "\n".join([(await client.get_workflow_handle(i).fetch_history()).to_json() for i in ids])


EXPECTED_ARGV = {
    "claude-code": (
        "--print --verbose --output-format stream-json --model claude-haiku-4-5 "
        "--effort high --dangerously-skip-permissions"
    ),
    "codex-cli": (
        "exec --json --model claude-haiku-4-5 -c model_reasoning_effort=high "
        "--dangerously-bypass-approvals-and-sandbox --skip-git-repo-check"
    ),
    "gemini-cli": "--output-format stream-json --model claude-haiku-4-5 --yolo --prompt",
}
OWN_CONFIG = {
    "claude-code": "/durabench/mcp.json",
    "codex-cli": "/home/agent/.codex/config.toml",
    "gemini-cli": "/home/agent/.gemini/settings.json",
}


@pytest.mark.parametrize("agent", ["claude-code", "codex-cli", "gemini-cli"])
async def test_cli_gets_its_command_line_user_mcp_config_and_keys(
    agent: str,
    client: Client,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    secrets = {name: f"{name.lower()}-{uuid.uuid4().hex}" for name in KEYS}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SOURCEGRAPH_URL", "https://sourcegraph.invalid")
    settings = settings.model_copy(update={"sandbox_network": "none"})
    _write_suite(settings.home)
    effort = {} if agent == "gemini-cli" else {"effort": "high"}
    request = RunRequest(
        run_id=f"cli-{uuid.uuid4().hex[:6]}",
        suite="clis",
        agent=agent,
        model=MODEL,
        agent_options=effort,
        infra_retries=0,
    )
    paths, result = await finished_run(request, client, settings)
    assert {(a.lane, a.exit_class) for a in result.attempts} == {
        ("baseline", "completed"),
        (FULL, "completed"),
    }

    instruction = {
        lane: (paths.attempt("cli-001", lane, 1) / "durabench" / "instruction.md").read_text()
        for lane in ("baseline", FULL)
    }
    for lane in ("baseline", FULL):
        rec = paths.attempt("cli-001", lane, 1) / "agent" / "stand-in"
        argv = rec.joinpath("argv").read_text().split("\n---\n")[:-1]
        flags = shlex.split(EXPECTED_ARGV[agent])
        if agent == "claude-code" and lane == FULL:
            flags += ["--mcp-config", "/durabench/mcp.json"]
        flags += ["--"] if agent != "gemini-cli" else []
        assert argv == [*flags, instruction[lane].rstrip("\n")]
        assert rec.joinpath("user").read_text().split() == ["agent"]  # never root
        assert rec.joinpath("net").read_text().split() == ["lo"]  # no network in tests
        names = set(rec.joinpath("env-names").read_text().split())
        hashes = dict(line.split() for line in rec.joinpath("key-hashes").read_text().splitlines())
        configs = rec.joinpath("config-files").read_text().split()
        if lane == FULL:
            assert OWN_CONFIG[agent] in configs
            assert "SOURCEGRAPH_ACCESS_TOKEN" in names
            assert hashes["SOURCEGRAPH_ACCESS_TOKEN"] == _sha(secrets["SOURCEGRAPH_ACCESS_TOKEN"])
        else:
            assert configs == []  # the baseline lane gets no MCP config at all
            assert not names & {"SOURCEGRAPH_ACCESS_TOKEN", "SOURCEGRAPH_URL"}
        own_key = {"claude-code": "ANTHROPIC_API_KEY", "codex-cli": "OPENAI_API_KEY"}.get(
            agent, "GEMINI_API_KEY"
        )
        assert hashes[own_key] == _sha(secrets[own_key])  # the key reached the CLI ...
        assert set(hashes) - {own_key, "SOURCEGRAPH_ACCESS_TOKEN"} == set()  # ... no other

    # ... and no value is kept anywhere: results, argv, history, logs.
    files = [p.read_bytes() for p in paths.root.rglob("*") if p.is_file()]
    histories = await _histories(client, request.run_id, result.plan.lanes)
    out, err = capfd.readouterr()
    for value in secrets.values():
        assert not [f for f in files if value.encode() in f]
        assert value not in histories and value not in out + err


async def test_real_claude_code_without_credentials_or_network_is_infra(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """npm installs the real CLI into a derived image; with no key it cannot log in."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (CI installs it)")
    for name in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = settings.model_copy(update={"sandbox_network": "none"})
    source = next(t for t in load_suite("pytorch") if t.task_id == "tensor-gelu-001")
    shutil.copytree(source.task_dir, settings.home / "suites" / "real" / source.task_id)
    request = RunRequest(
        run_id=f"real-{uuid.uuid4().hex[:6]}",
        suite="real",
        agent="claude-code",
        model=MODEL,
        infra_retries=1,
        infra_backoff_sec=0.1,
    )
    paths, result = await finished_run(request, client, settings)
    assert len(result.attempts) == 4  # both lanes, retried once
    assert {a.exit_class for a in result.attempts} <= {"infra_auth", "infra_other"}
    assert set(result.excluded) == {source.task_id}
    assert "Nothing was measured" in paths.report_md.read_text()
    build_log = (paths.attempt(source.task_id, "baseline", 1) / "build.log").read_text()
    assert "@anthropic-ai/claude-code@" in build_log  # installed now, or cached earlier
    transcript = paths.attempt(source.task_id, "baseline", 1) / "agent" / "stdout.txt"
    init = json.loads(transcript.read_text().splitlines()[0])
    assert init["type"] == "system" and init["mcp_servers"] == []  # the real CLI started
