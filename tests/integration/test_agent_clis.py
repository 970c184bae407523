"""The agent CLIs through the real pipeline and the model gateway, without a real model.

Stand-in executables named ``claude``, ``codex`` and ``gemini`` sit on the task image's
PATH. Each records what it was given (its arguments, its variables, its user, its network
interfaces, the config files it can see), calls its model API and, on the MCP lane, its
MCP server the way the real CLI would (through the base URL and key it was handed), and
prints a short recorded transcript. A scripted model API on loopback stands behind the
gateway: it must receive the worker's real keys, the sandbox only ever placeholders. The
last test installs the real Claude Code from npm and runs it with no credentials: it must
end as infrastructure, never as the model.
"""

from __future__ import annotations

import shlex
import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from durabench.agents.llm_ids import ALLOW_UNKNOWN_MODEL_ENV
from durabench.gateway import TOKEN_PREFIX
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from tests.integration.runs import finished_run, stand_in_task
from tests.model_upstream import (
    ModelUpstream,
    Received,
    Reply,
    anthropic_stream,
    gemini_stream,
    openai_stream,
)
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
  [ -n "$value" ] && printf '%s %s\\n' "$name" "$value"
done > "$rec/keys"
env | grep '_BASE_URL=\\|SOURCEGRAPH_URL=' | sort > "$rec/urls"
id -un > "$rec/user"
ls /sys/class/net > "$rec/net"
for f in /durabench/mcp.json "$HOME/.codex/config.toml" "$HOME/.gemini/settings.json"; do
  [ -f "$f" ] && grep -qi mcp "$f" && echo "$f"
done > "$rec/config-files"
echo "a note from $(basename "$0")" > /workspace/NOTES.md
"""
MODEL_CALL = r"""
python3 - "$(basename "$0")" > "$rec/model-call" 2>&1 <<'PY'
import json, os, sys, urllib.request
cli, env = sys.argv[1], os.environ
if cli == "claude":
    url, auth = env["ANTHROPIC_BASE_URL"] + "/v1/messages", {"x-api-key": env["ANTHROPIC_API_KEY"]}
elif cli == "codex":
    url = env["OPENAI_BASE_URL"] + "/responses"
    auth = {"authorization": "Bearer " + env["OPENAI_API_KEY"]}
else:
    model = "claude-haiku-4-5:streamGenerateContent?alt=sse"  # the run's model, as asked
    url = env["GOOGLE_GEMINI_BASE_URL"] + "/v1beta/models/" + model
    auth = {"x-goog-api-key": env["GEMINI_API_KEY"]}
calls = [(url, auth, {"model": "claude-haiku-4-5", "stream": True, "messages": []})]
if env.get("SOURCEGRAPH_URL"):
    mcp = {"authorization": "token " + env["SOURCEGRAPH_ACCESS_TOKEN"]}
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}  # as an MCP client asks
    calls.append((env["SOURCEGRAPH_URL"] + "/.api/mcp/v1", mcp, listing))
for url, headers, body in calls:
    headers = {**headers, "content-type": "application/json"}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        print(url, response.status, len(response.read()))
PY
cat /opt/stand-in/$(basename "$0").jsonl
"""


def _write_suite(home: Path) -> None:
    """One task whose image has the three stand-ins on PATH."""
    script = STAND_IN.format(keys=" ".join(KEYS)) + MODEL_CALL
    stand_in_task(home, "clis", "cli-001", dict.fromkeys(TRANSCRIPTS, script), TRANSCRIPTS)


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
        "exec --json --model claude-haiku-4-5 -c model_providers.durabench.base_url=URL "
        "-c model_reasoning_effort=high "
        "--dangerously-bypass-approvals-and-sandbox --skip-git-repo-check"
    ),
    "gemini-cli": "--output-format stream-json --model claude-haiku-4-5 --yolo --prompt",
}
CLI_VERSION = {"claude-code": "2.1.332", "codex-cli": "0.169.0", "gemini-cli": "0.61.0"}
"""The version each stand-in prints (``STAND_IN_VERSIONS``), as a result names it."""
OWN_CONFIG = {
    "claude-code": "/durabench/mcp.json",
    "codex-cli": "/home/agent/.codex/config.toml",
    "gemini-cli": "/home/agent/.gemini/settings.json",
}


def _env(lines: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in lines.splitlines() if "=" in line)


def _scripted(received: Received) -> Reply:
    """The model API's answer to each stand-in (and the MCP server's, under /sg)."""
    if received.path.startswith("/sg/"):
        return Reply(body={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    if received.path.startswith("/v1/messages"):
        return anthropic_stream(MODEL, [{"type": "text", "text": "ok"}], input_tokens=321)
    if received.path.startswith("/v1/responses"):
        return openai_stream(MODEL, "ok", input_tokens=400, cached=100, output_tokens=33)
    return gemini_stream(MODEL, "ok", prompt=222, output_tokens=11)


BASE_URL = {
    "claude-code": "ANTHROPIC_BASE_URL",
    "codex-cli": "OPENAI_BASE_URL",
    "gemini-cli": "GOOGLE_GEMINI_BASE_URL",
}
BASE_PATH = {"claude-code": "/anthropic\n", "codex-cli": "/openai/v1\n", "gemini-cli": "/gemini\n"}
OWN_KEY = {
    "claude-code": ("ANTHROPIC_API_KEY", "x-api-key", ""),
    "codex-cli": ("OPENAI_API_KEY", "authorization", "Bearer "),
    "gemini-cli": ("GEMINI_API_KEY", "x-goog-api-key", ""),
}


@pytest.mark.parametrize("agent", ["claude-code", "codex-cli", "gemini-cli"])
async def test_cli_gets_its_command_line_user_mcp_config_and_only_placeholder_keys(
    agent: str,
    client: Client,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    secrets = {name: f"{name.lower()}-{uuid.uuid4().hex}" for name in KEYS}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    # One model id for the three stand-ins (what is checked here is the command line and
    # the keys): the plan's check of the id against the agent's provider is allowed past.
    monkeypatch.setenv(ALLOW_UNKNOWN_MODEL_ENV, "true")
    upstream = ModelUpstream(_scripted).__enter__()
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.setenv(name, upstream.url)
    monkeypatch.setenv("SOURCEGRAPH_URL", upstream.url + "/sg")
    _write_suite(settings.home)
    effort = {} if agent == "gemini-cli" else {"effort": "high"}
    request = RunRequest(
        run_id=f"cli-{uuid.uuid4().hex[:6]}",
        suite="clis",
        agent=AgentSpec(name=agent, model=MODEL, options=effort),
        infra_retries=0,
    )
    try:
        paths, result = await finished_run(request, client, settings)
    finally:
        upstream.__exit__()
    assert {(a.lane, a.exit_class) for a in result.attempts} == {
        ("baseline", "completed"),
        (FULL, "completed"),
    }

    instruction = {
        lane: (paths.attempt("cli-001", lane, 1) / "durabench" / "instruction.md").read_text()
        for lane in ("baseline", FULL)
    }
    own_key, header, scheme = OWN_KEY[agent]
    for lane in ("baseline", FULL):
        rec = paths.attempt("cli-001", lane, 1) / "agent" / "stand-in"
        argv = rec.joinpath("argv").read_text().split("\n---\n")[:-1]
        urls = rec.joinpath("urls").read_text()
        if agent == "codex-cli":  # the base URL it was handed, as a TOML string
            base_url = f'model_providers.durabench.base_url="{_env(urls)["OPENAI_BASE_URL"]}"'
            argv = [a.replace(base_url, "model_providers.durabench.base_url=URL") for a in argv]
        flags = shlex.split(EXPECTED_ARGV[agent])
        if agent == "claude-code" and lane == FULL:
            flags += ["--mcp-config", "/durabench/mcp.json"]
        flags += ["--"] if agent != "gemini-cli" else []
        assert argv == [*flags, instruction[lane].rstrip("\n")]
        assert rec.joinpath("user").read_text().split() == ["agent"]  # never root
        assert sorted(rec.joinpath("net").read_text().split()) == ["eth0", "lo"]  # the gateway's
        names = set(rec.joinpath("env-names").read_text().split())
        keys = dict(line.split() for line in rec.joinpath("keys").read_text().splitlines())
        configs = rec.joinpath("config-files").read_text().split()
        assert "200" in rec.joinpath("model-call").read_text()  # the gateway answered
        # The CLI got a placeholder where its key goes, and the gateway's address.
        assert keys[own_key].startswith(TOKEN_PREFIX)
        assert f"{BASE_URL[agent]}=http://" in urls and BASE_PATH[agent] in urls
        if lane == FULL:
            assert OWN_CONFIG[agent] in configs
            assert keys["SOURCEGRAPH_ACCESS_TOKEN"] == keys[own_key]  # a placeholder too
            assert "/mcp" in urls and upstream.url not in urls
        else:
            assert configs == []  # the baseline lane gets no MCP server at all
            assert not names & {"SOURCEGRAPH_ACCESS_TOKEN", "SOURCEGRAPH_URL"}
        assert set(keys) - {own_key, "SOURCEGRAPH_ACCESS_TOKEN"} == set()  # no other key
        attempt = next(a for a in result.attempts if a.lane == lane)
        assert attempt.cli_version == CLI_VERSION[agent]  # as its `--version` printed it
        assert attempt.task_image_id.startswith("sha256:")
        assert attempt.agent_image_id == attempt.task_image_id  # the image had the CLI
        assert attempt.tokens.model_dump() == {  # the gateway metered what the API sent
            "input": 0,
            "output": 0,
            "cache_read": 0,
            "cache_write": 0,
            **{k: v // 2 for k, v in upstream.sent.items()},
        }

    # The API got the worker's real key, the MCP server its real token, both lanes ...
    models = [r for r in upstream.received if not r.path.startswith("/sg/")]
    assert [r.headers[header] for r in models] == [scheme + secrets[own_key]] * 2
    (mcp,) = [r for r in upstream.received if r.path.startswith("/sg/")]
    assert mcp.headers["authorization"] == f"token {secrets['SOURCEGRAPH_ACCESS_TOKEN']}"
    # ... and no secret value is kept anywhere: results, argv, history, logs.
    files = [p.read_bytes() for p in paths.root.rglob("*") if p.is_file()]
    histories = await _histories(client, request.run_id, result.plan.lanes)
    out, err = capfd.readouterr()
    for value in secrets.values():
        assert not [f for f in files if value.encode() in f]
        assert value not in histories and value not in out + err


BUDGETED = r"""#!/bin/sh
# A stand-in claude that keeps asking the model until it is refused.
cat /opt/stand-in/init.jsonl
python3 - <<'PY'
import json, os, urllib.error, urllib.request
url, key = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", os.environ["ANTHROPIC_API_KEY"]
body = json.dumps({"model": "claude-haiku-4-5", "stream": True, "messages": []}).encode()
for n in range(10):
    try:
        request = urllib.request.Request(url, data=body, headers={"x-api-key": key})
        urllib.request.urlopen(request).read()  # the whole answer, as a CLI reads it
    except urllib.error.HTTPError as exc:
        error = json.loads(exc.read())["error"]["message"]
        print(json.dumps({"type": "result", "subtype": "error_during_execution",
                          "is_error": True, "result": f"API Error: 400 {error}"}))
        raise SystemExit(1)
PY
"""


async def test_a_run_budget_ends_the_attempt_as_the_models_when_spent(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    init = [{"type": "system", "subtype": "init", "model": MODEL}]
    stand_in_task(settings.home, "budget", "cli-001", {"claude": BUDGETED}, {"init": init})
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"sk-{uuid.uuid4().hex}")
    with ModelUpstream(_scripted) as upstream:  # 341 tokens an answer
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        request = RunRequest(
            run_id=f"budget-{uuid.uuid4().hex[:6]}",
            suite="budget",
            agent=AgentSpec(name="claude-code", model=MODEL),
            config_mode="baseline_only",
            allow_unpaired=True,  # one lane is enough here
            budget_tokens=1000,
            infra_retries=0,
        )
        _, result = await finished_run(request, client, settings)
    (attempt,) = result.attempts
    assert attempt.exit_class == "model_budget", attempt.reason
    assert len(upstream.received) == 3  # 341, 682, 1,023 tokens: the fourth was refused
    # Its cost is the metered tokens at the price the plan recorded: claude-haiku-4-5 at $1
    # a million in and $5 out, 3 x 321 in = 0.000963 and 3 x 20 out = 0.0003.
    assert attempt.cost_usd == pytest.approx(0.001263)
    assert attempt.tokens.input + attempt.tokens.output == 1023


FORGER = r"""#!/bin/sh
# A stand-in claude that asks the API for a bigger model than it was told to use, then
# prints a transcript claiming the requested model and next to no tokens.
python3 - <<'PY'
import json, os, urllib.error, urllib.request
url, key = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", os.environ["ANTHROPIC_API_KEY"]
body = json.dumps({"model": "claude-opus-4-1", "stream": True, "messages": []}).encode()
try:
    urllib.request.urlopen(urllib.request.Request(url, data=body, headers={"x-api-key": key}))
except urllib.error.HTTPError as exc:
    print(exc.code, exc.read().decode())
PY
echo a note > /workspace/NOTES.md
cat /opt/stand-in/forged.jsonl
"""


async def test_a_rewritten_transcript_changes_nothing_that_is_counted(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    forged = [
        {"type": "system", "subtype": "init", "model": MODEL},
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "Done.",
            "total_cost_usd": 0.000001,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    ]
    stand_in_task(settings.home, "forger", "cli-001", {"claude": FORGER}, {"forged": forged})
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"sk-{uuid.uuid4().hex}")

    def opus(received: Received) -> Reply:
        return anthropic_stream("claude-opus-4-1", [{"type": "text", "text": "ok"}])

    with ModelUpstream(opus) as upstream:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
        request = RunRequest(
            run_id=f"forger-{uuid.uuid4().hex[:6]}",
            suite="forger",
            agent=AgentSpec(name="claude-code", model=MODEL),
            config_mode="baseline_only",
            allow_unpaired=True,
            infra_retries=0,
        )
        _, result = await finished_run(request, client, settings)
    (attempt,) = result.attempts
    assert attempt.exit_class == "infra_other"  # never scored as the requested model
    assert "asked the API only for claude-opus-4-1" in attempt.reason
    assert upstream.received == []  # the gateway refused the other model: no key spent
    assert (attempt.tokens.input, attempt.tokens.output) == (0, 0)  # what the API sent
    # The cost is the meter's: nothing reached the API, so nothing was paid; the
    # transcript's figure is kept only beside it.
    assert (attempt.cost_usd, attempt.cli_cost_usd) == (0.0, 0.000001)
