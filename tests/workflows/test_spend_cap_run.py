"""A capped run through the real workflows, plan and report: whole pairs, then a clean stop.

The plan prices ``claude-haiku-4-5`` at $1 per million tokens of every kind
(``prices.toml``); with no earlier run, a session's high end is the stated default of
100k + 30k + 3M + 150k = 3.28M tokens: $3.28, so a pair is expected to cost $6.56. Each
session here spends $3.00, reported to the run's book as a host's broker reports it (the
sandbox is faked, so the test stands in for the gateway's meter). Cap $15, parallel 2,
the four ``pytorch`` tasks:

* t1 and t2 start (0 + 6.56 + 6.56 = 13.12 <= 15);
* while one of them runs and the other has ended at $6.00, a third would bring it to
  6.00 + 6.56 + 6.56 = 19.12: it waits; once both ended at $6.00 each, 12.00 + 6.56 =
  18.56 > 15 and nothing runs: the cap is reached;
* the two pairs left are not run, listed in the report with the command that goes on;
  every pair that ran ran both lanes; the book's spending is $12.00, within the cap.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from temporalio import activity
from temporalio.client import Client
from temporalio.worker import Worker

from activities import PlanActivities, ResultActivities, SpendActivities
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AgentRunOutput, AttemptRef
from durabench.models.run import RunRequest
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.spend import BlockAnswer, HostReport, SpendState
from durabench.spend.wire import REPORT, spend_workflow_id
from starter.approve import approve_main
from starter.run import main as run_main
from tests.workflows.fakes import Recorder
from tests.workflows.harness import RunHandle, until
from tests.workflows.recording import record
from workflows import WORKFLOWS, SuiteRunWorkflow, run_workflow_id
from workflows.run_spend import RunSpendWorkflow

PRICES = """
[anthropic.claude-haiku-4-5]
input = 1.0
output = 1.0
cache_read = 1.0
cache_write = 1.0
source = "test"
as_of = 2026-11-01
"""
SESSION_COST = 3_000_000
"""Micro-dollars each session spends: $3.00."""


@dataclass
class _Capped:
    """A worker with the real workflows, plan, report and spend activities; sandbox faked."""

    client: Client
    settings: Settings
    rec: Recorder
    spent: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    capped: list[bool] = field(default_factory=list)

    def activities(self) -> list[Callable[..., Any]]:
        fakes = {a.__name__: a for a in self.rec.sandbox_activities()}

        @activity.defn(name="run_agent")
        async def run_agent(ref: AttemptRef) -> AgentRunOutput:
            """The fake session, and its spending as the host's broker reports it."""
            out: AgentRunOutput = await fakes["run_agent"](ref)
            self.capped.append(ref.spend_capped)
            self.spent[ref.task.task_id] += SESSION_COST
            book = self.client.get_workflow_handle(spend_workflow_id(ref.run_id))
            spent = dict(self.spent)
            report = HostReport(host="h", held=sum(spent.values()), spent=spent)
            await book.execute_update(REPORT, report, result_type=BlockAnswer)
            return out

        plan = PlanActivities(self.settings, self.client)
        results = ResultActivities(self.settings)
        return [
            plan.plan_run,
            plan.plan_page,
            plan.record_run,
            results.record_attempt,
            results.write_report,
            SpendActivities(self.client, self.settings).start_pairs,
            run_agent,
            *(a for name, a in fakes.items() if name != "run_agent"),
        ]

    def worker(self) -> Worker:
        """The worker of the real workflows and these activities, on the test's queue."""
        return Worker(
            self.client,
            task_queue=self.settings.task_queue,
            workflows=list(WORKFLOWS),
            activities=self.activities(),
        )

    async def approved(self, req: RunRequest) -> RunHandle:
        """Start ``req`` as ``starter run --detach`` does; approve it at its price."""
        await run_main(req, detach=True, client=self.client, settings=self.settings)
        handle = self.client.get_workflow_handle_for(
            SuiteRunWorkflow.run, run_workflow_id(req.run_id)
        )

        async def planned() -> bool:
            if (await handle.describe()).close_time is not None:
                await handle.result()  # raises: planning failed
            return await handle.query(SuiteRunWorkflow.plan) is not None

        await until(planned, "the run made its plan")
        the_plan = await handle.query(SuiteRunWorkflow.plan)
        assert the_plan is not None and the_plan.cost is not None
        assert the_plan.cost.session_high_usd == pytest.approx(3.28)
        await approve_main(req.run_id, "ann", client=self.client, cost=the_plan.cost.restated())
        return handle


@pytest.fixture
def capped(client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> _Capped:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-not-used")
    settings.home.mkdir(parents=True, exist_ok=True)
    (settings.home / "prices.toml").write_text(PRICES)
    rec = Recorder(queue=settings.task_queue, task_ids=[], runs_dir=settings.runs_dir)
    return _Capped(client, settings, rec)


def _request(cap: float) -> RunRequest:
    return RunRequest(
        run_id=f"capped-{uuid.uuid4().hex[:6]}",
        suite="pytorch",
        agent=AgentSpec(name="claude-code", model="claude-haiku-4-5"),
        parallel=2,
        infra_backoff_sec=0.1,
        max_spend_usd=cap,
    )


async def test_a_capped_run_runs_whole_pairs_and_stops_cleanly_at_its_cap(
    capped: _Capped, client: Client, settings: Settings
) -> None:
    req = _request(15.0)
    rec = capped.rec
    async with capped.worker():
        handle = await capped.approved(req)
        outcome = await handle.result()
        book = client.get_workflow_handle_for(RunSpendWorkflow.run, spend_workflow_id(req.run_id))
        state: SpendState = await book.result()  # closed by the run as it reported
        await record(
            client,
            {
                "suite_run_capped": run_workflow_id(req.run_id),
                "run_spend": spend_workflow_id(req.run_id),
            },
        )

    assert outcome.status == "completed" and outcome.not_run == 2
    assert f"--rerun infra --from {req.run_id}" in outcome.continue_command
    assert "--max-spend 30.00" in outcome.continue_command
    ran = {task for task, _lane, _n in rec.sessions}
    assert len(ran) == 2 and all(capped.capped)
    for task in ran:  # never half a pair
        assert {lane for t, lane, _n in rec.sessions if t == task} == {
            "baseline",
            "sourcegraph_full",
        }
    assert sum(sum(by_task.values()) for by_task in state.spent.values()) == 12_000_000
    report = RunPaths.for_run(settings.runs_dir, req.run_id).report_md.read_text()
    assert "## Not run: spend cap" in report
    assert report.count(": not run: spend cap") == 2
    assert not any(f"- {t}: not run" in report for t in ran)


async def test_a_cancelled_capped_run_closes_its_book(
    capped: _Capped, client: Client, settings: Settings
) -> None:
    """The book is a workflow of its own: a run cancelled mid-pair must not leave it open."""
    capped.rec.agent_gate = asyncio.Event()  # sessions run until the test lets them end
    req = _request(100.0)
    async with capped.worker():
        handle = await capped.approved(req)
        await until(lambda: capped.rec.in_agent > 0, "a session runs")
        await handle.cancel()
        capped.rec.agent_gate.set()  # the sessions end; the run ends cancelled
        book = client.get_workflow_handle_for(RunSpendWorkflow.run, spend_workflow_id(req.run_id))
        await book.result()  # it ends: closed by the cancelled run
