"""The deployment's sandbox slots as a host's activities reach them (``claim_host``, removal).

Only with ``DURABENCH_SANDBOX_QUOTA`` set: without a quota every host's own admission is
the only bound (:mod:`durabench.sandbox.docker.capacity`), and no call is made. The slots
workflow is started by the first claim that finds it absent.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

from temporalio import activity
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory
from temporalio.service import RPCError, RPCStatusCode

from durabench.logs import get_logger
from durabench.models.sandbox_slots import (
    FULL,
    GIVE_BACK,
    SLOTS_WORKFLOW,
    TAKE,
    GiveBackSlot,
    SlotAnswer,
    SlotHolder,
    SlotsState,
    TakeSlot,
    slots_workflow_id,
)
from durabench.settings.values import Settings
from durabench.wording import counted

__all__ = ["DeploymentSlots", "deployment_full"]

log = get_logger("durabench.sandbox")

T = TypeVar("T")

_ANSWER_S = 10.0
"""How long a slots update may wait for a worker to answer (it is retried after)."""


def deployment_full(answer: SlotAnswer) -> ApplicationError:
    """The retryable refusal of a claim while the deployment holds its quota."""
    return ApplicationError(
        f"the deployment holds its {counted(answer.limit, 'sandbox')} (DURABENCH_SANDBOX_QUOTA, "
        f"{answer.held} held across every host); the attempt waits for one to end",
        type="DeploymentFull",
        category=ApplicationErrorCategory.BENIGN,
    )


class _Full(Exception):
    """The ``take`` update was rejected: every slot is held."""

    def __init__(self, held: int) -> None:
        super().__init__(f"{held} held")
        self.held = held


class DeploymentSlots:
    """The slots workflow of the worker's deployment, or nothing when no quota is set."""

    def __init__(self, client: Client | None, settings: Settings) -> None:
        self.client = client
        self.quota = settings.sandbox_quota
        self.task_queue = settings.task_queue

    @property
    def enforced(self) -> bool:
        """Whether a deployment-wide quota is set (and this worker can reach the server)."""
        return self.quota is not None and self.client is not None

    def _handle(self) -> WorkflowHandle[object, None]:
        if self.client is None:  # pragma: no cover - guarded by ``enforced``
            raise RuntimeError("no Temporal client")
        return self.client.get_workflow_handle(slots_workflow_id(self.task_queue))

    async def _start(self) -> None:
        if self.client is None:  # pragma: no cover - guarded by ``enforced``
            return
        await self.client.start_workflow(
            SLOTS_WORKFLOW,
            SlotsState(),
            id=slots_workflow_id(self.task_queue),
            task_queue=self.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary="sandbox slots of the deployment (DURABENCH_SANDBOX_QUOTA)",
        )

    async def take(self, key: str, host: str) -> SlotAnswer | None:
        """A slot for attempt ``key`` on ``host``; ``None`` when no quota is enforced.

        Raises:
            ApplicationError: the slots workflow did not answer (retried).
        """
        if not self.enforced or self.quota is None:
            return None
        info = activity.info()
        holder = SlotHolder(
            key=key,
            host=host,
            workflow_id=info.workflow_id or "",
            run_id=info.workflow_run_id or "",
        )
        req = TakeSlot(holder=holder, limit=self.quota)
        try:
            try:
                return await self._update(TAKE, req, SlotAnswer)
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
            await self._start()  # the first claim of the deployment (or after a terminate)
            return await self._update(TAKE, req, SlotAnswer)
        except _Full as full:
            return SlotAnswer(granted=False, held=full.held, limit=self.quota)

    async def give_back(self, key: str, host: str) -> None:
        """The attempt's sandbox on ``host`` is gone; a slots workflow that is gone holds none."""
        if not self.enforced:
            return
        try:
            await self._update(GIVE_BACK, GiveBackSlot(key=key, host=host), type(None))
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            log.warning("no sandbox slots workflow: nothing to give back", attempt=key)

    async def _update(self, name: str, arg: object, result_type: type[T]) -> T:
        try:
            update = self._handle().execute_update(name, arg, result_type=result_type)
            return await asyncio.wait_for(update, timeout=_ANSWER_S)
        except TimeoutError:
            raise ApplicationError(
                f"the sandbox slots workflow did not answer {name} in {_ANSWER_S:.0f} s"
            ) from None
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == FULL:
                held = cause.details[0] if cause.details else 0
                raise _Full(int(held) if isinstance(held, int) else 0) from None
            refused = f"the sandbox slots workflow refused {name}: {cause}"
            raise ApplicationError(refused) from None
