"""What a person who opens a run in the Temporal Web UI sees, read back from the server.

The run's static details (what was asked) and current details (the plan, what to do,
progress, pauses: the UI reads them through the ``__temporal_workflow_metadata`` query),
a summary on every activity and timer, and search attributes that stay true to the end.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import SearchAttributeKey
from temporalio.contrib.pydantic import pydantic_data_converter

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.paths import RunPaths
from durabench.text_safety import md_escape
from runtime.embedded import temporal_cli
from starter.approve import approve_main
from starter.control import pause_main
from starter.run import main as run_main
from tests.starter_cli import starter_async
from tests.workflows.fakes import SLOW
from tests.workflows.harness import Disk, Env, start_run, until
from tests.workflows.recording import record
from workflows import SuiteRunWorkflow, attempt_workflow_id, pair_workflow_id, run_workflow_id
from workflows.search_attributes import (
    EXIT_CLASS,
    LANE,
    MODEL,
    REWARD,
    RUN_STATUS,
    SUITE,
    TASK,
)

Handle = WorkflowHandle[Any, Any]


async def current_details(handle: Handle) -> str:
    """The run's current details, as the Web UI asks for them."""
    meta = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    return str(meta.current_details)


async def attribute(handle: Handle, key: SearchAttributeKey[Any]) -> Any:
    return (await handle.describe()).typed_search_attributes.get(key)


async def _planned(disk: Disk, **request: Any) -> tuple[RunRequest, Handle]:
    req = RunRequest(run_id=f"r-{uuid.uuid4().hex[:6]}", infra_backoff_sec=0.1, **request)
    await run_main(req, detach=True, client=disk.client, settings=disk.settings)
    handle = disk.client.get_workflow_handle(run_workflow_id(req.run_id))
    while await handle.query(SuiteRunWorkflow.plan) is None:
        await asyncio.sleep(0.1)
    return req, handle


async def test_the_run_shows_what_was_asked_its_plan_and_how_to_approve(disk: Disk) -> None:
    req, handle = await _planned(disk, suite="pytorch", agent=AgentSpec(model="m-1"))
    desc = await handle.describe()
    summary = await desc.static_summary()  # detached: the plan is a worker's to make
    assert summary is not None and summary.startswith("pytorch · oracle · m-1 · paired; ")
    assert f"python -m starter approve {req.run_id}" in summary
    asked = await desc.static_details()
    assert asked is not None
    assert "- model: m-1" in asked and "- suite: pytorch" in asked
    assert "- config mode: paired" in asked

    await until(lambda: _says(handle, "waiting for approval"), "the run asks for approval")
    now = await current_details(handle)
    assert "send signal `approve`" in now and f"python -m starter approve {req.run_id}" in now
    assert "- tasks: 4" in now and "- agent-hours (upper bound): " in now
    assert await attribute(handle, RUN_STATUS) == "awaiting_approval"

    await approve_main(req.run_id, "ann", client=disk.client)
    await handle.result()
    done = await current_details(handle)
    assert "completed" in done and "4/4 pairs done" in done and "approved by ann" in done
    assert await attribute(handle, RUN_STATUS) == "completed"
    assert await attribute(handle, SUITE) == "pytorch"


async def test_a_rerun_is_listed_under_its_suite_and_model(disk: Disk) -> None:
    """A rerun is asked for without a suite or model: its plan names them."""
    first = await disk.run(suite="pytorch", agent=AgentSpec(model="m-1"))
    rerun = await disk.run(suite="", rerun="all", rerun_of=first.run_id)
    handle = disk.client.get_workflow_handle(run_workflow_id(rerun.run_id))
    assert (await attribute(handle, SUITE), await attribute(handle, MODEL)) == ("pytorch", "m-1")


async def _says(handle: Handle, text: str) -> bool:
    return text in await current_details(handle)


async def test_a_run_refused_at_plan_time_says_failed(disk: Disk) -> None:
    """Gap-fill without a counterpart is refused by the worker's plan, not by the starter."""
    with pytest.raises(WorkflowFailureError):
        await disk.run(suite="pytorch", agent=AgentSpec(model="m-1"), config_mode="baseline_only")
    listed = [
        wf
        async for wf in disk.client.list_workflows(
            f"WorkflowType = 'SuiteRunWorkflow' AND TaskQueue = '{disk.settings.task_queue}'"
        )
    ]
    assert len(listed) == 1
    handle = disk.client.get_workflow_handle(listed[0].id)
    assert await attribute(handle, RUN_STATUS) == "failed"
    assert "failed" in await current_details(handle)
    await record(disk.client, {"suite_run_refused": handle.id})


@pytest.mark.parametrize("env", [[SLOW, "t2"]], indirect=True)
async def test_a_paused_then_cancelled_run_says_so(env: Env) -> None:
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    await until(lambda: (SLOW, "baseline") in env.rec.live, "the slow pair's agent runs")
    await until(lambda: _says(handle, "in flight: t-slow"), "the details name the pair in flight")
    await pause_main(request.run_id, "ann", reason="quota check", client=env.client)
    await until(lambda: _says(handle, "paused by ann: quota check"), "the details say paused")
    assert "send signal `resume`" in await current_details(handle)

    await handle.cancel()
    with pytest.raises(WorkflowFailureError):
        await handle.result()
    assert await attribute(handle, RUN_STATUS) == "cancelled"
    assert "cancelled" in await current_details(handle)


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_attempts_carry_task_lane_model_exit_class_and_reward(env: Env) -> None:
    env.rec.classes["t1/baseline"] = ["infra_rate_limit", "completed"]
    env.rec.rewards["t1/sourcegraph_full"] = 0.5
    model = f"m-{uuid.uuid4().hex[:6]}"  # the server is shared: only this test's attempts
    request, handle = await start_run(env, agent=AgentSpec(model=model), infra_retries=1)
    await approve_main(request.run_id, "ann", client=env.client)
    await handle.result()

    def attempt(lane: str, n: int) -> Handle:
        return env.client.get_workflow_handle(attempt_workflow_id(request.run_id, "t1", lane, n))

    limited = await attempt("baseline", 1).describe()
    attrs = limited.typed_search_attributes
    assert (attrs.get(TASK), attrs.get(LANE), attrs.get(MODEL)) == ("t1", "baseline", model)
    assert attrs.get(EXIT_CLASS) == "infra_rate_limit"
    full = (await attempt("sourcegraph_full", 1).describe()).typed_search_attributes
    assert (full.get(EXIT_CLASS), full.get(REWARD)) == ("completed", 0.5)
    # "Every rate-limited attempt of this model" is one filter.
    query = f"DurabenchModel = '{model}' AND DurabenchExitClass = 'infra_rate_limit'"
    await until(
        lambda: _listed(env.client, query, attempt("baseline", 1).id), "the attempt is listed"
    )
    found = [wf.id async for wf in env.client.list_workflows(query)]
    assert found == [attempt("baseline", 1).id]  # the retried attempt 2 completed

    pair = env.client.get_workflow_handle(pair_workflow_id(request.run_id, "t1"))
    assert "**baseline** attempt 2: done: completed" in await current_details(pair)

    # Every activity and timer of the run, the pair and the attempts says what it is for.
    ids = [run_workflow_id(request.run_id), pair_workflow_id(request.run_id, "t1")]
    ids += [attempt("baseline", n).id for n in (1, 2)] + [attempt("sourcegraph_full", 1).id]
    summaries = {wf_id: await _summaries(env.client, wf_id) for wf_id in ids}
    for wf_id, said in summaries.items():
        assert said and all(text for _, text in said), (wf_id, said)
    run_said = dict(summaries[ids[0]])
    assert model in run_said["plan_run"] and "approved by ann" in run_said["record_run"]
    assert "tasks 1-1 of 1" in run_said["plan_page"]
    assert any(kind == "timer" and "retry" in text for kind, text in summaries[ids[1]])
    first = dict(summaries[ids[2]])
    assert "fake-host" in first["finish_sandbox"] and "image of t1" in first["provision_sandbox"]
    assert "time limit 600 s" in first["run_agent"]
    assert "infra_rate_limit" in first["record_attempt"]
    await record(
        env.client,
        {"suite_run_ui": ids[0], "paired_task_ui": ids[1], "agent_run_outcome": ids[2]},
    )


async def _listed(client: Client, query: str, wf_id: str) -> bool:
    return wf_id in [wf.id async for wf in client.list_workflows(query)]


async def _summaries(client: Client, wf_id: str) -> list[tuple[str, str]]:
    """``(activity type or "timer", summary)`` of each activity and timer in the history."""
    history = await client.get_workflow_handle(wf_id).fetch_history()
    out = []
    for event in history.events:
        marker = event.marker_recorded_event_attributes
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kind = event.activity_task_scheduled_event_attributes.activity_type.name
        elif marker.marker_name == "core_local_activity":  # a local activity, done
            kind = json.loads(marker.details["data"].payloads[0].data)["activity_type"]
        elif event.event_type == EventType.EVENT_TYPE_TIMER_STARTED:
            kind = "timer"
        else:
            continue
        summary = event.user_metadata.summary
        text = ""
        if summary.data:
            text = pydantic_data_converter.payload_converter.from_payload(summary, str)
        out.append((kind, text))
    return out


async def _timer_summaries(client: Client, wf_id: str) -> list[str]:
    return [text for kind, text in await _summaries(client, wf_id) if kind == "timer"]


async def test_a_waiting_run_shows_its_plan_and_approval_in_history_and_names_its_signaller(
    disk: Disk, temporal_address: str
) -> None:
    """What needs no worker: the approval timer's summary, the result, the approver's identity.

    The person approves with the ``temporal`` CLI as ``alice``: the workflow cannot see who
    sent a signal, the run's history can.
    """
    req, handle = await _planned(disk, suite="pytorch", agent=AgentSpec(model="m-1"))
    await until(lambda: _timer_summaries(disk.client, handle.id), "the approval timer starts")
    (waiting,) = await _timer_summaries(disk.client, handle.id)
    assert "waiting for approval" in waiting
    assert f"python -m starter approve {req.run_id}" in waiting
    assert f"temporal workflow signal --workflow-id run/{req.run_id} --name approve" in waiting
    for said in ("pytorch", "oracle", "m-1", "tasks: 4", "baseline", "token budget: "):
        assert said in waiting, (said, waiting)

    meta = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    signals = {s.name: s.description for s in meta.definition.signal_definitions}
    assert set(signals) == {"approve", "reject", "pause", "resume", "set_parallel"}, signals
    assert "python -m starter approve" in signals["approve"]
    assert all(signals.values()), signals

    signal = [temporal_cli(), "workflow", "signal", "--address", temporal_address]
    signal += ["--identity", "alice", "--workflow-id", handle.id, "--name", "approve"]
    proc = await asyncio.create_subprocess_exec(*signal, "--input", "{}")
    assert await proc.wait() == 0
    outcome = await disk.client.get_workflow_handle_for(SuiteRunWorkflow.run, handle.id).result()
    assert outcome.approved_by == "alice" and outcome.measured
    assert "baseline: mean reward 1" in outcome.headline, outcome.headline
    report = RunPaths.for_run(disk.settings.runs_dir, req.run_id).report_md.read_text()
    # The Web UI's result and the report open with one sentence: the paired difference too.
    assert "Paired difference (sourcegraph_full − baseline): +0.000" in outcome.headline
    assert report.splitlines()[2] == f"**{md_escape(outcome.headline)}**"
    assert "approved by alice" in report
    assert "approved by alice" in await current_details(handle)
    audit = await starter_async(disk.settings, "audit", req.run_id)  # run.json and history agree
    assert audit.returncode == 0, audit.stdout + audit.stderr


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_a_run_that_measured_nothing_is_listed_as_such(env: Env) -> None:
    env.rec.classes["t1/baseline"] = ["infra_usage_cap"]
    request, handle = await start_run(env, infra_retries=0)
    await approve_main(request.run_id, "ann", client=env.client)
    outcome = await handle.result()
    assert outcome.status == "completed" and not outcome.measured
    assert outcome.headline.startswith("Nothing was measured"), outcome.headline
    assert await attribute(handle, RUN_STATUS) == "nothing_measured"
    assert "Nothing was measured" in await current_details(handle)
