"""The Temporal Web UI of a waiting and of a finished run, read in headless Chromium.

No worker runs while the pages are read: what a person sees then is what the server keeps
(the activities' and the approval timer's summaries, the result), not what a query would
answer. The run is approved from the page itself, as a person would: Send a Signal. The
screenshots stay in the test's directory.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from runtime.client import connect_when_ready
from runtime.embedded import wait_for_port
from starter.run import main as run_main
from tests.conftest import dev_server, free_port
from tests.integration.chromium import page_text_when, png_size
from tests.workflows.harness import disk_worker, has_event, until
from workflows import SuiteRunWorkflow, run_workflow_id

pytestmark = pytest.mark.browser

SIGNALED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED

SEND_APPROVE = """
const sleep = ms => new Promise(done => setTimeout(done, ms));
const until = async (find, what) => {
  for (let i = 0; i < 200; i++) { const found = find(); if (found) return found; await sleep(100); }
  throw new Error("never found: " + what);
};
const named = (selector, text) => () => [...document.querySelectorAll(selector)]
  .find(e => (e.innerText || "").trim().startsWith(text) && e.offsetParent !== null);
(await until(named("button", "More Actions"), "More Actions")).click();
(await until(named("[role=menuitem], li, button", "Send a Signal"), "Send a Signal")).click();
const shown = () => document.querySelector("#signal-confirmation-modal[open] #signal-name");
const name = await until(() => shown()?.offsetParent && shown(), "the signal name field");
const submit = named("#signal-confirmation-modal button:not([disabled])", "Submit");
const typed = () => {  // typed again until taken: the dialog clears its fields as it opens
  name.value = "approve";
  name.dispatchEvent(new Event("input", {bubbles: true}));
  return submit();
};
(await until(typed, "Submit, once the name is taken")).click();
await until(() => document.body.innerText.includes("Workflow signaled."), "the UI's toast");
return "sent";
"""
"""A person's clicks: More Actions, Send a Signal, name ``approve``, no input, Submit.

With no worker running the UI cannot list the signals, so it asks for the name.
"""


@dataclass
class UiServer:
    address: str
    ui: str
    client: Client


@pytest.fixture
async def ui_server(tmp_path: Path) -> AsyncIterator[UiServer]:
    """A dev server of the test's own with its Web UI, both on loopback."""
    port, ui_port = free_port(), free_port()
    log = tmp_path / "server.log"
    with dev_server(log, port, ui_port):
        await wait_for_port("127.0.0.1", port, timeout_s=60, log=log)
        await wait_for_port("127.0.0.1", ui_port, timeout_s=60, log=log)
        client = await connect_when_ready(f"127.0.0.1:{port}", "default")
        yield UiServer(f"127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}", client)


async def test_the_web_ui_shows_a_waiting_and_a_finished_run_with_no_worker(
    ui_server: UiServer, settings: Settings, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"temporal_address": ui_server.address})
    client, run_id = ui_server.client, f"r-{uuid.uuid4().hex[:6]}"
    request = RunRequest(run_id=run_id, suite="pytorch", agent=AgentSpec(model="m-1"))
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    async with disk_worker(client, settings):
        await run_main(request, detach=True, client=client, settings=settings)
        await until(lambda: _phase_is(handle, "awaiting_approval"), "the run waits")
    page = f"{ui_server.ui}/namespaces/default/workflows/{quote(handle.id, safe='')}"

    waiting = await asyncio.to_thread(
        page_text_when,
        tmp_path,
        page,
        tmp_path / "waiting.png",
        [
            "plan_run • pytorch · oracle · m-1",  # the plan activity's summary
            "waiting for approval",  # the approval timer's summary
            f"python -m starter approve {run_id}",
            f"temporal workflow signal --workflow-id run/{run_id} --name approve",
            'Send a Signal, approve, input {"approver": "your name"}',
            "tasks: 4",
            "config mode: paired (baseline, sourcegraph_full)",
        ],
        then=SEND_APPROVE,
    )
    assert "token budget: " in waiting and waiting.endswith("\fsent")
    await until(lambda: has_event(handle, SIGNALED), "the Web UI's approve signal is in history")
    assert png_size((tmp_path / "waiting.png").read_bytes())[0] == 1280

    async with disk_worker(client, settings):
        await handle.result()

    finished = await asyncio.to_thread(
        page_text_when,
        tmp_path,
        page,
        tmp_path / "finished.png",
        [
            '"measured": true',
            "baseline: mean reward 1 (4/4 passed)",
            # The dev server's UI (no sign-in) sends no identity: the record says so.
            '"approved_by": "not named"',
        ],
    )
    assert '"mean_reward": 1' in finished
    assert png_size((tmp_path / "finished.png").read_bytes())[0] == 1280


async def _phase_is(handle: WorkflowHandle[Any, Any], phase: str) -> bool:
    return bool((await handle.query(SuiteRunWorkflow.progress)).phase == phase)
