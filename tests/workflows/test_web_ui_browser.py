"""The Temporal Web UI of a waiting and of a finished run, read in headless Chromium.

No worker runs while the pages are read: what a person sees then is what the server keeps
(the activities' and the approval timer's summaries, the result), not what a query would
answer. The run is approved from the page itself, as a person would: Send a Signal. The
screenshots stay in the test's directory.
"""

from __future__ import annotations

import asyncio
import re
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
from starter.run import preview_plan, start
from tests.conftest import dev_server, free_port
from tests.integration.chromium import in_view, keep, page_text_when
from tests.workflows.fakes import Recorder
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


OPEN_DETAILS = """
const sleep = ms => new Promise(done => setTimeout(done, ms));
[...document.querySelectorAll("a, button, [role=tab]")]
  .find(e => (e.innerText || "").trim() === "User Metadata").click();
let text = "";
for (let i = 0; i < 100 && !text.includes("agent-hours (upper bound)"); i++) {
  await sleep(100);
  const frames = [...document.querySelectorAll("iframe")].map(
    f => { try { return f.contentDocument.body.innerText; } catch (e) { return "?" + e; } });
  text = document.querySelector("main").innerText + "\\n" + frames.join("\\n");
}
return text;
"""
"""Open the User Metadata tab; its text, the Markdown frames' too, once the plan shows."""

FIRST_VIEW = {"width": 1280, "height": 800}
"""A laptop's window: what the run's page shows before any scroll or click."""

DOCS_SCALE = 0.75
"""The screenshots' size against the window: docs/watching.md shows them, kept small."""

RUN_TOGETHER = re.compile(r"(approval timeout|tasks|agent-hours \(upper bound\)|model)(\d|m-)")
"""A label drawn against its value, as a Markdown table's cells were ("approval timeout86400 s")."""


def _shown_first(text: str, needles: list[str]) -> None:
    """Each needle is drawn wholly inside the first window (the ``in_view`` lines)."""
    lines = text.rpartition("\f")[2].splitlines()
    assert lines == [f"in view: {n}" for n in needles], lines


async def test_the_web_ui_tells_the_story_at_waiting_running_and_ended(
    ui_server: UiServer, settings: Settings, tmp_path: Path
) -> None:
    """The run started as ``starter run`` starts it (the plan made here first); no worker
    runs while the waiting and ended pages are read; the run is approved from the page."""
    settings = settings.model_copy(update={"temporal_address": ui_server.address})
    client, run_id = ui_server.client, f"r-{uuid.uuid4().hex[:6]}"
    request = RunRequest(run_id=run_id, suite="pytorch", agent=AgentSpec(model="m-1"))
    handle = client.get_workflow_handle_for(SuiteRunWorkflow.run, run_workflow_id(run_id))
    plan = preview_plan(request, settings)
    assert plan is not None and plan.task_count == 4
    async with disk_worker(client, settings):
        await start(client, settings, request, plan=plan)
        await until(lambda: _phase_is(handle, "awaiting_approval"), "the run waits")
    page = f"{ui_server.ui}/namespaces/default/workflows/{quote(handle.id, safe='')}"

    story = [  # what it will do, what it costs, how to approve: in the first window
        "4 tasks × 2 lanes (baseline, sourcegraph_full)",
        f"agent time: at most {plan.estimated_agent_hours:.2f} agent-hours",
        f"nothing starts until a person approves: python -m starter approve {run_id}",
        "More Actions → Send a Signal → approve",
    ]
    waiting = await asyncio.to_thread(
        page_text_when,
        tmp_path,
        page,
        tmp_path / "web-ui-waiting.png",
        [*story, "waiting for approval: 4 tasks × 2 lanes", "plan_run • pytorch · oracle · m-1"],
        then=in_view(story),
        scale=DOCS_SCALE,
        **FIRST_VIEW,
    )
    _shown_first(waiting, story)
    assert not RUN_TOGETHER.search(waiting), RUN_TOGETHER.search(waiting)
    keep(tmp_path / "web-ui-waiting.png", "web-ui-waiting.png")
    details = await asyncio.to_thread(
        page_text_when, tmp_path, page, tmp_path / "details.png", story, then=OPEN_DETAILS
    )
    shown = details.rpartition("\f")[2]  # the static details, rendered from Markdown
    assert f"python -m starter reject {run_id} --reason why" in shown  # not "–reason"
    assert '{"approver": "your name"}' in shown  # straight quotes: it can be typed as read
    assert "tasks: 4" in shown and not RUN_TOGETHER.search(shown), shown
    sent = await asyncio.to_thread(
        page_text_when, tmp_path, page, tmp_path / "sent.png", story, then=SEND_APPROVE
    )
    assert sent.endswith("\fsent")
    await until(lambda: has_event(handle, SIGNALED), "the Web UI's approve signal is in history")

    rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    rec.agent_gate = asyncio.Event()  # the agents run until the running page is read
    async with disk_worker(client, settings, rec):
        await until(lambda: _agents_run(rec), "agents run")
        running = await asyncio.to_thread(
            page_text_when,
            tmp_path,
            page,
            tmp_path / "web-ui-running.png",
            [*story, "tensor-gelu-001: baseline vs sourcegraph_full"],
            then=in_view(story),
            scale=DOCS_SCALE,
            **FIRST_VIEW,
        )
        _shown_first(running, story)
        keep(tmp_path / "web-ui-running.png", "web-ui-running.png")
        rec.agent_gate.set()
        await handle.result()

    result = [
        "baseline: mean reward 1 (4/4 passed)",
        "Paired difference (sourcegraph_full − baseline): +0.000",
        '"approved_by": "not named"',  # the dev server's UI sends no identity: said so
    ]
    ended = await asyncio.to_thread(
        page_text_when,
        tmp_path,
        page,
        tmp_path / "web-ui-ended.png",
        result,
        then=in_view(result),
        scale=DOCS_SCALE,
        **FIRST_VIEW,
    )
    _shown_first(ended, result)
    keep(tmp_path / "web-ui-ended.png", "web-ui-ended.png")


async def _agents_run(rec: Recorder) -> bool:
    return rec.in_agent > 0


async def _phase_is(handle: WorkflowHandle[Any, Any], phase: str) -> bool:
    return bool((await handle.query(SuiteRunWorkflow.progress)).phase == phase)
