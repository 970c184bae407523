"""Activities replaced by recorders, under the real names, for workflow-logic tests.

They stand in for Docker and the file system so a test can check orchestration
invariants: nothing before approval, every sandbox torn down, at most ``parallel`` pairs.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.run_cancel import unless_run_cancelled
from durabench.errors import AgentLost, ConfigError, ImageBuildError
from durabench.models.attempt import (
    AgentRunOutput,
    AttemptRef,
    ClassifyAttemptInput,
    CollectOutput,
    FinishInput,
    FinishOutput,
    HostClaim,
    PreparedImage,
    ProvisionOutput,
    VerifyOutput,
)
from durabench.models.pair import PairInput
from durabench.models.parallelism import Parallelism
from durabench.models.results import AttemptResult, LaneSummary, PairResult
from durabench.models.run import Approval, PlanSummary, RunRequest, TaskRef
from durabench.models.suite_run import (
    PlanPage,
    PlanPageInput,
    RecordRunInput,
    ReportInput,
    ReportOutput,
)
from durabench.models.verdict import Verdict
from durabench.settings.paths import RunPaths

BUILD_FAILS = "t-build-fails"
VERIFY_FAILS = "t-verify-fails"
SLOW = "t-slow"


def completed_pair(pair: PairInput) -> PairResult:
    """What an instant stand-in pair returns: each lane completed on its first attempt."""
    task_id = pair.task.task_id
    attempts = tuple(
        AttemptResult(
            run_id=pair.run_id,
            task_id=task_id,
            lane=lane,
            attempt=1,
            exit_class="completed",
            agent=pair.agent.name,
            model=pair.agent.model,
        )
        for lane in pair.lanes
    )
    return PairResult(task_id=task_id, attempts=attempts)


@dataclass
class Recorder:
    """What the fake activities saw."""

    queue: str
    task_ids: list[str]
    calls: list[str] = field(default_factory=list)
    live: set[tuple[str, str]] = field(default_factory=set)
    max_live_pairs: int = 0
    provisioned: list[tuple[str, str]] = field(default_factory=list)
    torn_down: list[tuple[str, str]] = field(default_factory=list)
    attempts: list[AttemptResult] = field(default_factory=list)
    agent_runs: list[AttemptRef] = field(default_factory=list)
    """Each attempt ``run_agent`` was asked to run, as it arrived."""
    plan_gate: asyncio.Event | None = None
    """When set, planning waits for it."""
    parallelism: Parallelism | None = None
    """The parallel slots the plan derives (``None``: the plan derives none)."""
    page_gate: asyncio.Event | None = None
    """When set, reading any page of the plan but the first waits for it."""
    agent_gate: asyncio.Event | None = None
    """When set, agents run until it is set."""
    in_agent: int = 0
    """Agents running now."""
    messages: dict[str, str] = field(default_factory=dict)
    """``task/lane`` to the agent's final message (what a service grades)."""
    rewards: dict[str, float] = field(default_factory=dict)
    """``task/lane`` to the verifier's reward (default 1.0)."""
    classes: dict[str, list[str]] = field(default_factory=dict)
    """``task/lane`` to the exit class of attempt 1, 2, ... (the last one repeats)."""
    cap_resets_at: datetime | None = None
    """When a usage cap the fake classifier reports resets."""
    rate_limit_resets_at: datetime | None = None
    """When a rate-limited verdict says the API named to come back (``None``: it did not)."""
    failures: Counter[str] = field(default_factory=Counter)
    """``activity/task/lane`` to how many more times that activity fails (transiently)."""
    sessions_ended: list[tuple[str, str, int]] = field(default_factory=list)
    """Sessions whose agent phase returned their end: each is paid for, and must keep a
    verdict."""
    lost: set[str] = field(default_factory=set)
    """``task/lane/attempt`` whose session dies unrecorded (``AgentLost``) once launched."""
    broken: set[str] = field(default_factory=set)
    """``activity/task/lane`` where that activity always fails, non-retryably."""
    gates: dict[str, asyncio.Event] = field(default_factory=dict)
    """``activity/task/lane`` to an event that activity (``run_agent``, ``teardown_sandbox``)
    waits for there."""
    on_account: Counter[str] = field(default_factory=Counter)
    """Agents running now, per account."""
    max_on_account: Counter[str] = field(default_factory=Counter)
    """The most agents that ran at once, per account."""
    cli_versions: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """``task/lane`` to the CLI version ``--version`` printed and the one the transcript
    named (default: neither)."""
    runs_dir: Path | None = None
    """When set, collecting writes an attempt's files there as the real collection does:
    its reward, transcript and diff."""
    holds: dict[str, asyncio.Event] = field(default_factory=dict)
    """``activity/task/lane`` to an event that activity (``claim_host``, ``provision_sandbox``
    after one heartbeat, ``launch`` (``run_agent`` before a session's launch),
    ``run_agent``, ``teardown_sandbox``) waits for there without heartbeating: a
    cancel cannot reach it, so it ends as if none had come. ``held`` names each as it waits."""
    held: list[str] = field(default_factory=list)
    gated: list[str] = field(default_factory=list)
    """``activity/task/lane`` of each activity that waited at its gate."""
    cancelled: list[str] = field(default_factory=list)
    """``activity/task/lane`` of each activity a cancel reached at its gate."""
    sessions: list[tuple[str, str, int]] = field(default_factory=list)
    """Sessions launched, as (task, lane, attempt): a ``run_agent`` retried re-attaches
    to its attempt's session (as the real one does, by its launch markers)."""
    reserved: set[tuple[str, str, int]] = field(default_factory=set)
    """Host slots claimed and not yet released: (task, lane, attempt)."""
    claims: int = 0
    """``claim_host`` calls that ended."""

    def exit_class(self, ref: AttemptRef) -> str:
        plan = self.classes.get(f"{ref.task.task_id}/{ref.lane}", ["completed"])
        return plan[min(ref.attempt, len(plan)) - 1]

    def fail_if_told(self, name: str, task_id: str, lane: str) -> None:
        """Raise a retryable error if ``failures`` says ``name`` fails once more here.

        The error is what a worker that takes over from a dead one fails its predecessor's
        activity with (``WorkerLost``, retried at once), so a test of many failures takes
        no backoff; a retry policy counts it like any other failure.
        """
        key = f"{name}/{task_id}/{lane}"
        if key in self.broken:
            raise ConfigError(f"{name} is broken for {task_id} {lane}")
        if self.failures[key] > 0:
            self.failures[key] -= 1
            raise ApplicationError(
                f"{name} failed (transient, {self.failures[key]} to go)",
                type="WorkerLost",
                next_retry_delay=timedelta(milliseconds=100),
            )

    async def gate(self, name: str, task_id: str, lane: str) -> None:
        """Wait for the event ``gates`` has for ``name`` there, if any."""
        event = self.gates.get(f"{name}/{task_id}/{lane}")
        if event is not None and not event.is_set():
            self.gated.append(f"{name}/{task_id}/{lane}")
        try:
            while event is not None and not event.is_set():
                activity.heartbeat("waiting")  # so a cancel reaches it
                await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            self.cancelled.append(f"{name}/{task_id}/{lane}")
            raise

    async def hold(self, name: str, task_id: str, lane: str) -> None:
        """Wait, without heartbeating, for the event ``holds`` has for ``name`` there."""
        event = self.holds.get(f"{name}/{task_id}/{lane}")
        if event is not None:
            self.held.append(f"{name}/{task_id}/{lane}")
            await event.wait()

    async def slow_provision(self, ref: AttemptRef) -> None:
        """With a ``provision_sandbox`` gate: heartbeat until it is set; cancelled, undo.

        Undoing (the real activity lets Docker's create end, then removes the container)
        waits for the ``undo_provision`` gate, then records ``provision_undone``.
        """
        key = f"provision_sandbox/{ref.task.task_id}/{ref.lane}"
        gate = self.gates.get(key)
        if gate is None:
            return
        self.gated.append(key)
        try:
            while not gate.is_set():
                activity.heartbeat("provisioning")
                await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            self.cancelled.append(key)
            await self.gate("undo_provision", ref.task.task_id, ref.lane)
            self.calls.append("provision_undone")
            raise

    def keep_files(self, ref: AttemptRef, runs_dir: Path) -> None:
        """What a collection leaves in the attempt's directory: reward, transcript, diff."""
        where = RunPaths.for_run(runs_dir, ref.run_id).attempt(
            ref.task.task_id, ref.lane, ref.attempt
        )
        reward = self.rewards.get(f"{ref.task.task_id}/{ref.lane}", 1.0)
        files = {
            "agent/stdout.txt": f'{{"type": "result", "lane": "{ref.lane}"}}\n',
            "submission.patch": f"--- a/{ref.task.task_id}\n+++ b/{ref.task.task_id}\n",
        }
        if ref.service is None:  # a service grades instead of the verifier
            files["verifier/reward.txt"] = f"{reward}\n"
        for name, text in files.items():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            (where / name).write_text(text)

    def sandbox_activities(self) -> list[Callable[..., Any]]:
        """The sandbox's activities only, beside the real plan and result activities."""
        real = {"plan_run", "plan_page", "record_run", "record_attempt", "write_report"}
        return [a for a in self.activities() if a.__name__ not in real]  # named as registered

    def activities(self) -> list[Callable[..., Any]]:
        rec = self

        @activity.defn(name="plan_run")
        async def plan_run(request: RunRequest) -> PlanSummary:
            rec.calls.append("plan_run")
            if rec.plan_gate is not None:
                await rec.plan_gate.wait()
            return PlanSummary(
                request=request,
                lanes=("baseline", "sourcegraph_full"),
                task_count=len(rec.task_ids),
                estimated_agent_hours=0.1,
                results_dir=f"/results/{request.run_id}",
                parallelism=rec.parallelism,
            )

        @activity.defn(name="plan_page")
        async def plan_page(page: PlanPageInput) -> PlanPage:
            rec.calls.append(f"plan_page@{page.offset}")
            if rec.page_gate is not None and page.offset > 0:
                await rec.page_gate.wait()
            ids = rec.task_ids[page.offset : page.offset + page.limit]
            return PlanPage(tasks=tuple(TaskRef(task_id=t, task_dir=f"/tasks/{t}") for t in ids))

        @activity.defn(name="record_run")
        async def record_run(data: RecordRunInput) -> Approval:
            rec.calls.append("record_run")
            return data.approval

        @activity.defn(name="claim_host")
        async def claim_host(ref: AttemptRef) -> HostClaim:
            await rec.hold("claim_host", ref.task.task_id, ref.lane)
            rec.fail_if_told("claim_host", ref.task.task_id, ref.lane)
            rec.reserved.add((ref.task.task_id, ref.lane, ref.attempt))
            rec.claims += 1
            return HostClaim(host_id="fake-host", queue=rec.queue, host_timeout_sec=300.0)

        @activity.defn(name="provision_sandbox")
        async def provision_sandbox(ref: AttemptRef) -> ProvisionOutput:
            """The image (``prepare_image`` in calls), then the container."""
            key = (ref.task.task_id, ref.lane)
            rec.calls.append("prepare_image")
            if ref.task.task_id == BUILD_FAILS:
                raise ImageBuildError("image for task failed to build; build log: /x/build.log")
            image = PreparedImage(
                image=f"img-{ref.task.task_id}",
                dockerfile="Dockerfile",
                task_image_id=f"sha256:task-{ref.task.task_id}",
                agent_image_id=f"sha256:agent-{ref.task.task_id}",
            )
            ready_at = datetime.fromtimestamp(time.time(), tz=UTC)
            rec.calls.append("provision_sandbox")
            await rec.slow_provision(ref)
            if f"provision_sandbox/{key[0]}/{key[1]}" in rec.holds:
                activity.heartbeat("provisioning")  # once: the rest is one long Docker call
                await rec.hold("provision_sandbox", *key)
            rec.provisioned.append(key)
            rec.live.add(key)
            rec.fail_if_told("provision_sandbox", *key)  # the container made, the reply lost
            rec.max_live_pairs = max(rec.max_live_pairs, len({t for t, _ in rec.live}))
            printed, _ = rec.cli_versions.get(f"{key[0]}/{key[1]}", (None, None))
            return ProvisionOutput(
                image=image,
                image_ready_at=ready_at,
                container_id="c",
                instruction_file="instruction.md",
                mcp_config=False,
                cli_version=printed,
            )

        @activity.defn(name="run_agent")
        async def run_agent(ref: AttemptRef) -> AgentRunOutput:
            rec.calls.append("run_agent")
            rec.agent_runs.append(ref)
            session = (ref.task.task_id, ref.lane, ref.attempt)
            if session not in rec.sessions:  # a launch, as the real phase makes it
                await rec.hold("launch", ref.task.task_id, ref.lane)
                await unless_run_cancelled()
                rec.sessions.append(session)
            rec.fail_if_told("run_agent", ref.task.task_id, ref.lane)  # a worker lost mid-session
            if f"{session[0]}/{session[1]}/{session[2]}" in rec.lost:
                raise AgentLost(f"the session of {ref.container_name} died unrecorded")
            rec.in_agent += 1
            account = ref.account or ""
            rec.on_account[account] += 1
            rec.max_on_account[account] = max(rec.max_on_account[account], rec.on_account[account])
            try:
                await asyncio.sleep(0.1)
                if rec.agent_gate is not None:
                    await rec.agent_gate.wait()
                await rec.gate("run_agent", ref.task.task_id, ref.lane)
                await rec.hold("run_agent", ref.task.task_id, ref.lane)
            finally:
                rec.in_agent -= 1
                rec.on_account[account] -= 1
            while ref.task.task_id == SLOW:  # an agent that runs until cancelled
                activity.heartbeat("running")
                await asyncio.sleep(0.2)
            rec.sessions_ended.append(session)
            return AgentRunOutput(exit_code=0, timed_out=False, files_changed=1)

        @activity.defn(name="verify")
        async def verify(ref: AttemptRef) -> VerifyOutput:
            rec.calls.append("verify")
            await rec.gate("verify", ref.task.task_id, ref.lane)
            rec.fail_if_told("verify", ref.task.task_id, ref.lane)
            if ref.task.task_id == VERIFY_FAILS:
                raise ConfigError("the worker refused the task's directory")  # the harness's
            return VerifyOutput(reward=rec.rewards.get(f"{ref.task.task_id}/{ref.lane}", 1.0))

        async def classify(data: ClassifyAttemptInput) -> Verdict:
            """``finish_sandbox``'s classifying step (``classify`` in calls and failures)."""
            rec.calls.append("classify")
            rec.fail_if_told("classify", data.ref.task.task_id, data.ref.lane)
            exit_class = rec.exit_class(data.ref)
            message = rec.messages.get(f"{data.ref.task.task_id}/{data.ref.lane}", "")
            return Verdict(
                exit_class=exit_class,  # type: ignore[arg-type]
                reason=f"fake {exit_class}",
                classifier_version=0,
                last_message=message,
                cap_resets_at={
                    "infra_usage_cap": rec.cap_resets_at,
                    "infra_rate_limit": rec.rate_limit_resets_at,
                }.get(exit_class),
                cli_version=rec.cli_versions.get(
                    f"{data.ref.task.task_id}/{data.ref.lane}", (None, None)
                )[1],
            )

        async def collect(ref: AttemptRef) -> None:
            """``finish_sandbox``'s collecting step (``collect`` in calls)."""
            rec.calls.append("collect")
            if rec.runs_dir is not None:
                rec.keep_files(ref, rec.runs_dir)

        @activity.defn(name="teardown_sandbox")
        async def teardown_sandbox(ref: AttemptRef) -> None:
            await rec.gate("teardown_sandbox", ref.task.task_id, ref.lane)
            await rec.hold("teardown_sandbox", ref.task.task_id, ref.lane)
            key = (ref.task.task_id, ref.lane)
            rec.reserved.discard((*key, ref.attempt))
            rec.torn_down.append(key)
            rec.live.discard(key)

        @activity.defn(name="finish_sandbox")
        async def finish_sandbox(data: FinishInput) -> FinishOutput:
            ref = data.ref
            await rec.gate("finish_sandbox", ref.task.task_id, ref.lane)
            began = datetime.fromtimestamp(time.time(), tz=UTC)
            await collect(ref)
            ended = datetime.fromtimestamp(time.time(), tz=UTC)
            await teardown_sandbox(ref)
            verdict = None if data.classify is None else await classify(data.classify)
            return FinishOutput(
                collected=CollectOutput(),
                collect_started_at=began,
                collect_finished_at=ended,
                verdict=verdict,
            )

        @activity.defn(name="record_attempt")
        async def record_attempt(result: AttemptResult) -> None:
            rec.fail_if_told("record_attempt", result.task_id, result.lane)
            rec.attempts.append(result)

        @activity.defn(name="write_report")
        async def write_report(data: ReportInput) -> ReportOutput:
            rec.calls.append("write_report")
            rec.fail_if_told("write_report", "run", "report")
            lanes = tuple(
                LaneSummary(
                    lane=lane, attempts=0, scored=0, mean_reward=None, passed=0, by_class={}
                )
                for lane in ("baseline", "sourcegraph_full")
            )
            results = f"/results/{data.run_id}"
            tasks = {a.task_id for a in rec.attempts}  # every pair with an infra arm: excluded
            infra = bool(tasks) and tasks <= {a.task_id for a in rec.attempts if a.infra}
            story = "Nothing was measured (the fake's report)" if infra else "the fake's report"
            return ReportOutput(results_dir=results, report_path="/r.md", lanes=lanes, story=story)

        return [
            plan_run,
            plan_page,
            record_run,
            claim_host,
            provision_sandbox,
            run_agent,
            verify,
            teardown_sandbox,
            finish_sandbox,
            record_attempt,
            write_report,
        ]
