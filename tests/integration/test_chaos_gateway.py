"""Chaos: the gateway's process killed mid-session; the worker's supervisor restarts it.

A run of two tasks, one after the other, whose stand-in ``claude`` asks the model through
the gateway every half second for a few seconds (real Docker, the real dev server, a
scripted API on loopback). When the second session's third request reaches the API, the
API holds its answer while the test kills the gateway's process with SIGKILL, so the kill
cuts that request whatever the machine's load. That session then fails as a CLI does
when its API cannot be reached: it is ``infra_other`` and runs again, once; the first session, which
had ended, never runs again; the worker starts another gateway at once, which answers
the retry; no attempt is lost and no container is left.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import uuid
from collections import defaultdict

import pytest
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from tests.integration.runs import containers_of, finished_run, stand_in_task
from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream

pytestmark = pytest.mark.docker

MODEL = "claude-haiku-4-5"
TASKS = ("g1", "g2")
FINAL = "model_no_code"
"""The class of a session the kill did not cut: the stand-in changes no code."""
CALLS = 8
"""Model requests per session."""
KILL_AT = CALLS + 3
"""The gateway is killed while serving this request: the second session's third."""
STAND_IN = r"""#!/bin/sh
# A stand-in claude: asks the model every half second, as a session does, then ends.
cat /opt/stand-in/init.jsonl
python3 - <<'PY'
import http.client, json, os, time, urllib.request
url, key = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", os.environ["ANTHROPIC_API_KEY"]
body = json.dumps({"model": "claude-haiku-4-5", "stream": True, "messages": []}).encode()
for n in range(CALLS):
    try:
        request = urllib.request.Request(url, data=body, headers={"x-api-key": key})
        urllib.request.urlopen(request, timeout=30).read()
    except (OSError, http.client.HTTPException) as exc:  # refused, or a stream cut
        print(json.dumps({"type": "result", "subtype": "error_during_execution",
                          "is_error": True,
                          "result": f"API Error: Connection error. ECONNREFUSED ({exc})"}))
        raise SystemExit(1)
    time.sleep(0.5)
print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                  "result": "Left a note."}))
PY
""".replace("CALLS", str(CALLS))


class Api(ModelUpstream):
    """The scripted API; :attr:`busy` is set once request :data:`KILL_AT` has come.

    Its answer to that request waits for :attr:`killed`: the gateway dies serving it.
    """

    def __init__(self) -> None:
        self.busy, self.killed = threading.Event(), threading.Event()
        super().__init__(self._reply)

    def _reply(self, received: Received) -> Reply:
        if len(self.received) == KILL_AT:
            self.busy.set()
            self.killed.wait(300)
        return anthropic_stream(MODEL, [{"type": "text", "text": "ok"}], input_tokens=10)


async def test_a_gateway_killed_mid_session_is_restarted_and_only_its_sessions_rerun(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    init = [{"type": "system", "subtype": "init", "model": MODEL}]
    for task in TASKS:
        stand_in_task(settings.home, "gwchaos", task, {"claude": STAND_IN}, {"init": init})
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"sk-{uuid.uuid4().hex}")
    settings = settings.model_copy(update={"infra_backoff_sec": 1.0})
    gateway_file = settings.home / "gateway" / "gateway.json"
    request = RunRequest(
        run_id=f"gwchaos-{uuid.uuid4().hex[:6]}",
        suite="gwchaos",
        agent=AgentSpec(name="claude-code", model=MODEL),
        parallel=1,  # the first session ends before the second begins
        config_mode="baseline_only",
        allow_unpaired=True,  # the lane is what matters here, not the pair
        infra_retries=1,
        infra_backoff_sec=1.0,
    )
    with Api() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        run = asyncio.create_task(finished_run(request, client, settings))
        busy = asyncio.create_task(asyncio.to_thread(api.busy.wait, 300))
        await asyncio.wait([run, busy], return_when=asyncio.FIRST_COMPLETED)
        assert not run.done(), "the run ended before the gateway could be killed"
        killed = json.loads(gateway_file.read_text())["pid"]
        os.kill(killed, signal.SIGKILL)
        api.killed.set()
        paths, result = await asyncio.wait_for(run, timeout=300)

    assert json.loads(gateway_file.read_text())["pid"] != killed  # the worker restarted it
    by_lane: dict[tuple[str, str], list[str]] = defaultdict(list)
    for a in sorted(result.attempts, key=lambda a: a.attempt):
        by_lane[(a.task_id, a.lane)].append(a.exit_class)
    print({f"{t}/{lane}": classes for (t, lane), classes in by_lane.items()})
    assert by_lane == {  # nothing lost, nothing scored from the cut session
        ("g1", "baseline"): [FINAL],  # it had ended: never run again
        ("g2", "baseline"): ["infra_other", FINAL],  # cut by the kill: run again, once
    }
    assert containers_of(request.run_id) == []
    assert paths.results.exists()
