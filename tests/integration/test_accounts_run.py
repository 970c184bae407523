"""Accounts through a real run: leases, a usage cap rerouted, and no secret kept anywhere.

Two accounts of one slot each serve a paired run of a stand-in ``claude`` (real Docker,
real Temporal, a scripted model API behind the gateway). The stand-in prints the key it
got, to its transcript and its stderr, as agents that run ``env`` do, and calls the API
through the gateway; the API refuses account ``capped``'s real key with a usage cap whose
reset header names three hours from now, and the stand-in prints a later time of its own.
That account must cool until the API's time (never the text's), its lane's retry must go
to the other account, the sandbox must
only ever have held placeholders, and every history (fetched from Temporal), log line,
results file and container label is searched for both secret values: zero hits.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import docker
import pytest
from temporalio.client import Client

from durabench.gateway import TOKEN_PREFIX
from durabench.models.agent import AgentSpec
from durabench.models.results import AttemptResult
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from runtime.client import deployment_of
from runtime.workers import build_workers, run_workers
from starter.accounts import status_main
from tests.integration.runs import finished_run, stand_in_task
from tests.model_upstream import ModelUpstream, Received, Reply
from workflows import attempt_workflow_id, pair_workflow_id, pool_workflow_id, run_workflow_id

pytestmark = pytest.mark.docker

MODEL = "claude-haiku-4-5"
TASK = "acct-001"
INIT = {"type": "system", "subtype": "init", "model": MODEL}
DONE = {"type": "result", "subtype": "success", "is_error": False, "result": "Left a note."}
RESETS = datetime.fromtimestamp(int(time.time()) + 3 * 3600, tz=UTC)
"""The reset time the API's ``anthropic-ratelimit-unified-reset`` header names."""
PRINTED = RESETS + timedelta(hours=2)
"""The reset time the stand-in prints: the agent's word, never the cooldown's."""
CAPPED = {
    "type": "result",
    "subtype": "error_during_execution",
    "is_error": True,
    "result": f"5-hour limit reached ∙ resets {PRINTED:%I:%M%p} (UTC)".replace(" 0", " "),
}
STAND_IN = r"""#!/bin/sh
# A stand-in claude: leaks its key, as an agent running `env` would; calls the API.
echo "my key is $ANTHROPIC_API_KEY" >&2
text='{"type": "text", "text": "key '"$ANTHROPIC_API_KEY"'"}'
echo '{"type": "assistant", "message": {"content": ['"$text"']}}'
echo "a note" > /workspace/NOTES.md
cat /opt/stand-in/init.jsonl
status=$(python3 -c '
import json, os, urllib.error, urllib.request
url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
body = json.dumps({"model": "claude-haiku-4-5", "messages": []}).encode()
key = {"x-api-key": os.environ["ANTHROPIC_API_KEY"]}
request = urllib.request.Request(url, data=body, headers=key)
try:
    print(urllib.request.urlopen(request, timeout=60).status)
except urllib.error.HTTPError as exc:
    print(exc.code)
if os.environ.get("SOURCEGRAPH_URL"):  # the MCP lane: its server, as a real CLI starts it
    token = {"authorization": "token " + os.environ["SOURCEGRAPH_ACCESS_TOKEN"]}
    url = os.environ["SOURCEGRAPH_URL"] + "/.api/mcp/v1"
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    mcp = urllib.request.Request(url, data=json.dumps(hello).encode(), headers=token)
    urllib.request.urlopen(mcp, timeout=60).read()
')
if [ "$status" = 429 ]; then
  cat /opt/stand-in/capped.jsonl
  exit 1
fi
cat /opt/stand-in/done.jsonl
"""


def _write_suite(home: Path) -> None:
    transcripts = {"init": [INIT], "done": [DONE], "capped": [CAPPED]}
    stand_in_task(home, "accts", TASK, {"claude": STAND_IN}, transcripts)


def _api(capped_secret: str) -> ModelUpstream:
    """The model API: account ``capped``'s key has hit its usage cap."""

    def answer(received: Received) -> Reply:
        if received.path.startswith("/sg"):  # the lane's MCP server: it answers as one
            return Reply(body={"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}})
        if received.headers.get("x-api-key") == capped_secret:
            error = {"type": "rate_limit_error", "message": "usage limit reached"}
            headers = {
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": str(int(RESETS.timestamp())),
            }
            return Reply(status=429, body={"type": "error", "error": error}, headers=headers)
        return Reply(body={"model": MODEL, "usage": {"input_tokens": 5, "output_tokens": 1}})

    return ModelUpstream(answer)


def _write_accounts(home: Path, token_file: Path) -> None:
    (home / "accounts.toml").write_text(
        '[[account]]\nid = "capped"\nagent = "claude-code"\nsecret_env = "TEAM_A_KEY"\n'
        "slots = 1\n"
        '[[account]]\nid = "spare"\nagent = "claude-code"\n'
        f'secret_file = "{token_file}"\nslots = 1\n'
    )


async def _watch_labels(seen: list[dict[str, str]], run_id: str, stop: asyncio.Event) -> None:
    """Every label of every container of the run, while it runs."""
    api = docker.from_env().api
    try:
        while not stop.is_set():
            for c in await asyncio.to_thread(
                api.containers, all=True, filters={"label": f"durabench.run={run_id}"}
            ):
                seen.append(c["Labels"])
            await asyncio.sleep(0.5)
    finally:
        api.close()


async def _histories(
    client: Client, settings: Settings, run_id: str, attempts: Sequence[AttemptResult]
) -> list[str]:
    """Every history the run wrote: the run, its pair, each attempt it recorded, the pool.

    No fetch may fail: a history that cannot be read fails the test rather than leaving
    the search for secrets with less (or nothing) to search.
    """
    ids = [run_workflow_id(run_id), pair_workflow_id(run_id, TASK)]
    ids += [attempt_workflow_id(run_id, a.task_id, a.lane, a.attempt) for a in attempts]
    ids.append(pool_workflow_id(settings.task_queue))
    return [(await client.get_workflow_handle(wid).fetch_history()).to_json() for wid in ids]


async def test_a_usage_cap_cools_its_account_the_retry_reroutes_and_no_secret_is_kept(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    capped_secret = f"sk-capped-{uuid.uuid4().hex}"
    spare_secret = f"sk-spare-{uuid.uuid4().hex}"
    token_file = tmp_path / "spare.token"
    token_file.write_text(spare_secret + "\n")
    monkeypatch.setenv("TEAM_A_KEY", capped_secret)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # only accounts hand out keys
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", f"sgp-{uuid.uuid4().hex}")
    api = _api(capped_secret).__enter__()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("SOURCEGRAPH_URL", api.url + "/sg")
    _write_suite(settings.home)
    _write_accounts(settings.home, token_file)
    request = RunRequest(
        run_id=f"acct-{uuid.uuid4().hex[:6]}",
        suite="accts",
        agent=AgentSpec(name="claude-code", model=MODEL),
        infra_retries=1,
        infra_backoff_sec=0.5,
    )
    labels: list[dict[str, str]] = []
    stop = asyncio.Event()
    watcher = asyncio.create_task(_watch_labels(labels, request.run_id, stop))
    try:
        paths, result = await finished_run(request, client, settings)
    finally:
        stop.set()
        await watcher
        api.__exit__()

    assert result.plan.account_slots == 2
    arms = {
        lane: [(a.account, a.exit_class) for a in result.attempts if a.lane == lane]
        for lane in result.plan.lanes
    }
    capped_lane = next(lane for lane, arm in arms.items() if arm[0][0] == "capped")
    other = next(lane for lane in arms if lane != capped_lane)
    assert arms[capped_lane] == [("capped", "infra_usage_cap"), ("spare", "completed")]
    assert arms[other] == [("spare", "completed")]
    capped = next(a for a in result.attempts if a.exit_class == "infra_usage_cap")
    assert capped.cap_resets_at is not None
    assert capped.cap_resets_at == RESETS  # the API's header, not the printed time

    stop_workers = asyncio.Event()
    workers = asyncio.create_task(
        run_workers(build_workers(client, settings, await deployment_of(client)), stop_workers)
    )
    try:  # the pool answers through a worker: a status check needs one running
        health = {h.id: h for h in await status_main(client=client, settings=settings)}
    finally:
        stop_workers.set()
        await workers
    assert health["capped"].state == "cooling"
    assert health["capped"].until == capped.cap_resets_at
    assert health["spare"].state == "ready" and health["spare"].leased == 0

    # The agent held a placeholder (it printed it); the API got each account's real key.
    transcript = (paths.attempt(TASK, other, 1) / "agent" / "stdout.txt").read_text()
    assert f"key {TOKEN_PREFIX}" in transcript
    models = [r for r in api.received if not r.path.startswith("/sg")]
    assert sorted(r.headers["x-api-key"] for r in models) == sorted(
        [capped_secret, spare_secret, spare_secret]
    )
    files = [p.read_bytes() for p in paths.root.rglob("*") if p.is_file()]
    histories = await _histories(client, settings, request.run_id, result.attempts)
    assert len(histories) == 6  # run, pair, three attempts, pool
    out, err = capfd.readouterr()
    assert labels, "the run's containers were never seen"
    for secret in (capped_secret, spare_secret):
        assert not [f for f in files if secret.encode() in f]
        assert not [h for h in histories if secret in h]
        assert secret not in out + err
        assert not [lab for lab in labels if secret in json.dumps(lab)]
        assert secret not in (settings.home / "accounts.toml").read_text()
