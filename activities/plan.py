"""Plan activities: resolve the suite into a plan, hand out its tasks in pages, persist it.

The full task list lives in ``plan.json``; workflows carry only the summary and read the
tasks a page at a time, so a 10,000-task suite costs no more history than a small one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC
from functools import lru_cache
from pathlib import Path

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.account_leases import account_health, sync_pool
from activities.backends import sandbox_limits
from activities.boundary import KnownSecrets, scrubbed
from activities.hosts import hosts_polling
from activities.signaller import signal_identity
from durabench.attempt.inputs import check_task_dir, task_roots
from durabench.errors import AccountError, DurabenchError, ServiceAuthError, non_retryable_names
from durabench.lock_file import lock_digest
from durabench.models.accounts import AccountHealth
from durabench.models.room import RoomState
from durabench.models.run import NOT_NAMED, Approval, PlanSummary, RunPlan, RunRequest
from durabench.models.suite_run import PlanPage, PlanPageInput, RecordRunInput
from durabench.planning.backend_check import check_backend
from durabench.planning.cost_estimate import with_cost
from durabench.planning.parallelism import USABLE_STATES, with_parallelism
from durabench.planning.plan import make_plan
from durabench.planning.worker_checks import check_as_workers_will
from durabench.results.files import atomic_write
from durabench.results.store import open_store, pull, pulled, push
from durabench.sandbox.docker.capacity import host_admits
from durabench.service import ServiceClient, ServiceTarget, V1DatasetTask, check_service
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings

__all__ = ["PlanActivities"]


@lru_cache(maxsize=8)
def _read_plan(path: Path, mtime_ns: int) -> RunPlan:
    return RunPlan.model_validate_json(path.read_text())


class PlanActivities:
    """Planning; built in ``worker.py`` with the worker's settings."""

    def __init__(
        self,
        settings: Settings,
        client: Client | None = None,
        *,
        backend_check: Callable[[Settings], Sequence[str]] = check_backend,
    ) -> None:
        """Planning with the worker's settings and, where it has one, its client.

        ``backend_check``: the sandbox backend's preflight, made before anything is
        approved (what it could not tell is a warning of the plan); the unit tier, which
        has no backend, plans without it.
        """
        self.settings = settings
        self.client = client
        self.backend_check = backend_check
        self.secrets = KnownSecrets(settings.accounts_file)

    @activity.defn(name="plan_run")
    @scrubbed
    async def plan_run(self, request: RunRequest) -> PlanSummary:
        """Make the plan (:mod:`durabench.planning.plan`), check its service, write ``plan.json``.

        A run graded by a service checks, with the key its gradings will use (read from the
        worker's environment), that the service accepts it (see
        :func:`durabench.service.check_service`); a run of a service's dataset lists its
        tasks here first.
        """
        try:
            return await self._plan_run(request)
        except DurabenchError as exc:
            if type(exc).__name__ not in non_retryable_names():
                raise  # the service is busy, say: retried
            raise _refusal(exc) from exc

    async def _plan_run(self, request: RunRequest) -> PlanSummary:
        listed = None
        if request.service is not None:
            listed = await self._ask_service(request, request.service)
        lines, accounts, rooms = await self._accounts(request.agent.name)
        hosts = await hosts_polling(self.client, self.settings)
        if request.rerun_of is not None:  # the run to repeat may have run on other hosts
            await asyncio.to_thread(pulled, self.settings, request.rerun_of)
        if request.config_mode != "paired" or request.rerun_of is not None:
            # counterparts may have been made on other hosts: every run's plan and results
            await asyncio.to_thread(open_store(self.settings).pull_index, self.settings.runs_dir)
        plan = await asyncio.to_thread(self._plan, request, listed, accounts)
        unknown = await asyncio.to_thread(self.backend_check, self.settings)  # before approval
        if unknown:
            plan = plan.model_copy(update={"warnings": (*plan.warnings, *unknown)})
        plan = with_parallelism(plan, lines, hosts, self.settings, self.settings.sandbox, rooms)
        plan = await asyncio.to_thread(with_cost, plan, self.settings.runs_dir)
        if plan.request.service is not None:  # as planned: with a dataset file's name
            async with ServiceClient.for_target(plan.request.service) as client:
                await check_service(client, plan.request.service, request.run_id)
        paths = RunPaths.for_run(self.settings.runs_dir, plan.request.run_id)
        await asyncio.to_thread(atomic_write, paths.plan, plan.model_dump_json(indent=2))
        await asyncio.to_thread(push, self.settings, paths, paths.plan)
        return plan.summary()

    async def _ask_service(
        self, request: RunRequest, service: ServiceTarget
    ) -> Sequence[V1DatasetTask] | None:
        """The dataset's tasks, when the run is the service's dataset.

        Raises:
            ServiceAuthError: the key may not list it; listing is a v1 call, whatever API
                grades the run, and the message says so.
            ServiceError: see :meth:`ServiceClient.dataset_tasks`.
        """
        if not (request.tasks_from_service and service.dataset):
            return None
        async with ServiceClient.for_target(service) as client:
            try:
                return (await client.dataset_tasks(service.dataset)).tasks
            except ServiceAuthError as exc:
                raise ServiceAuthError(
                    f"{exc}. Listing a dataset's tasks is a v1 call (GET /v1/datasets/"
                    f"{service.dataset}/tasks) whatever --service-api says; or give the "
                    "tasks in a file with --dataset-file"
                ) from None  # the message carries the service's answer

    async def _accounts(
        self, agent: str
    ) -> tuple[list[AccountHealth], dict[str, object], tuple[RoomState, ...]]:
        """Sync the account pool; the agent's accounts and usable slots (none ready: refuse).

        And what the API's headers last said of the accounts' limits (the pool's rooms).

        Raises:
            AccountError: accounts are listed for the agent and none is ready.
        """
        if self.client is None:
            return [], {}, ()
        state = await sync_pool(self.client, self.settings)
        lines = [h for h in account_health(state) if h.agent == agent] if state else []
        if not lines or state is None:
            return [], {}, ()
        ready = [h for h in lines if h.state in USABLE_STATES]
        note = f"{len(ready)} of {len(lines)} {agent} accounts ready"
        others = [_why(h) for h in lines if h not in ready or h.detail]  # blocked, low
        note += f" ({'; '.join(others)})" if others else ""
        if not ready:
            raise AccountError(
                f"no {agent} account is ready: {'; '.join(others)}. See `python -m starter "
                f"accounts status`; fix {self.settings.accounts_file} or its secrets, or wait"
            )
        slots = {"account_slots": sum(h.slots for h in ready), "accounts_note": note}
        return lines, slots, state.rooms

    def _plan(
        self,
        request: RunRequest,
        listed: Sequence[V1DatasetTask] | None,
        accounts: dict[str, object],
    ) -> RunPlan:
        host = {
            "host_id": self.settings.host_id,
            "host_sandboxes": host_admits(self.settings),
            "sandbox": self.settings.sandbox,
            "sandbox_quota": self.settings.sandbox_quota,
            "sandbox_limits": sandbox_limits(self.settings),
            "worker_lock": lock_digest(),
        }
        plan = make_plan(request, self.settings, listed).model_copy(update=accounts | host)
        roots = task_roots(self.settings)  # workers check again; refused here, it fails early
        for task in plan.tasks:
            check_task_dir(task.task_dir, roots)
        check_as_workers_will(plan.request, plan.lanes, plan.tasks, self.settings)
        return plan

    @activity.defn(name="plan_page")
    @scrubbed
    async def plan_page(self, page: PlanPageInput) -> PlanPage:
        """Tasks ``offset`` to ``offset + limit`` of the run's plan."""
        paths = RunPaths.for_run(self.settings.runs_dir, page.run_id)
        path = (await asyncio.to_thread(pull, self.settings, paths, paths.plan)).plan
        plan = await asyncio.to_thread(_read_plan, path, path.stat().st_mtime_ns)
        return PlanPage(tasks=plan.tasks[page.offset : page.offset + page.limit])

    @activity.defn(name="record_run")
    @scrubbed
    async def record_run(self, data: RecordRunInput) -> Approval:
        """Write ``run.json``: the approved plan and who approved it; return the approval.

        An approval by signal that names nobody (the Web UI's, or the ``temporal`` CLI's
        ``--input '{}'``) is recorded under the identity its sender gave the server.
        """
        approval = data.approval
        if data.signal_number is not None and approval.approver == Approval().approver:
            approval = approval.model_copy(update={"approver": await self._signaller(data)})
            data = data.model_copy(update={"approval": approval})
        paths = RunPaths.for_run(self.settings.runs_dir, data.plan.request.run_id)
        atomic_write(paths.run, data.model_dump_json(indent=2))
        await asyncio.to_thread(push, self.settings, paths, paths.run)
        return approval

    async def _signaller(self, data: RecordRunInput) -> str:
        info = activity.info()
        wf_id, run_id = info.workflow_id, info.workflow_run_id
        if self.client is None or data.signal_number is None or not (wf_id and run_id):
            return Approval().approver
        who = await signal_identity(self.client, wf_id, run_id, "approve", data.signal_number)
        return who or NOT_NAMED  # the dev server's Web UI sends no identity


def _refusal(exc: DurabenchError) -> ApplicationError:
    """A plan the request itself makes impossible: the run fails with the reason, once.

    Benign, so the worker logs it at debug level: it is the person's to fix, not the
    worker's failure, and a stack trace would bury the one line that says what to change.
    """
    return ApplicationError(
        str(exc),
        type=type(exc).__name__,
        non_retryable=True,
        category=ApplicationErrorCategory.BENIGN,
    )


def _why(health: AccountHealth) -> str:
    until = f" until {health.until.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if health.until else ""
    return f"{health.id} {health.state}{until}: {health.detail}".rstrip(": ")
