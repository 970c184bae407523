"""What a run sends its pairs besides starting them: pause/resume, and cancel.

Plus the service's final scores, the run's one step after its pairs that needs the
service, so that the run's module holds its lifecycle and little else.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError

with workflow.unsafe.imports_passed_through():
    from activities import ServiceActivities
    from durabench.models.benchmark_service import ServiceTarget
    from durabench.service.payloads import ScoreRunInput

from workflows.ids import pair_workflow_id
from workflows.policies import RETRY

__all__ = ["cancel_pairs", "service_scores", "tell_pairs"]

CANCEL_WAIT = timedelta(minutes=10)
"""How long a cancelled run waits for its pairs to report their containers gone."""


async def tell_pairs(run_id: str, running: set[str], signal: str, seq: int) -> None:
    """Pass pause/resume to pairs in flight: they hold their infra retries.

    Each carries ``seq``, counting up over the run's pauses and resumes: a pair keeps the
    newest, so a quick resume whose signal overtakes the pause's never leaves it paused.
    """

    async def tell(task_id: str) -> None:
        pair = workflow.get_external_workflow_handle(pair_workflow_id(run_id, task_id))
        try:
            await pair.signal(signal, seq)
        except ApplicationError as err:  # it ended meanwhile
            workflow.logger.info("pair %s did not take %s: %s", task_id, signal, err)

    await asyncio.gather(*(tell(task_id) for task_id in sorted(running)))


async def cancel_pairs(run_id: str, running: Callable[[], set[str]]) -> None:
    """Cancel running pairs and wait (bounded) until they close, their containers gone.

    A pair that no longer runs refuses the cancel; its close is heard as every pair's is
    (:mod:`workflows.pair_ends`), so the refusal is only logged.
    """

    async def cancel(task_id: str) -> None:
        pair = workflow.get_external_workflow_handle(pair_workflow_id(run_id, task_id))
        try:
            await pair.cancel()
        except ApplicationError as err:  # it closed meanwhile
            workflow.logger.info("pair %s did not take the cancel: %s", task_id, err)

    await asyncio.gather(*(cancel(task_id) for task_id in sorted(running())))
    try:
        await workflow.wait_condition(
            lambda: not running(),
            timeout=CANCEL_WAIT,
            timeout_summary="cancelled pairs tear their containers down",
        )
    except TimeoutError:
        workflow.logger.error("pairs still running after cancel: %s", sorted(running()))


async def service_scores(service: ServiceTarget, run_id: str, lanes: tuple[str, ...]) -> None:
    """Each lane's final score from the service; a failure leaves it out of the report."""
    for lane in lanes:
        try:
            await workflow.execute_activity_method(
                ServiceActivities.score_run,
                ScoreRunInput(service=service, run_id=run_id, lane=lane),
                start_to_close_timeout=timedelta(minutes=30),
                heartbeat_timeout=timedelta(minutes=2),
                retry_policy=RETRY,
                summary=f"{lane}: final score from {service.url}",
            )
        except ActivityError as err:
            if isinstance(err.cause, CancelledError):
                raise
            workflow.logger.error("the service did not score %s: %s", lane, err.cause)
