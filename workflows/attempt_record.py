"""An attempt's result on disk (``result.json``): written by the attempt, or by its pair.

Writing it retries for hours: a workflow that failed here would have the pair start a new
attempt, and pay for a new session, for want of a file write.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities import ResultActivities
    from durabench.models.attempt import AttemptRef
    from durabench.models.results import AttemptResult

from workflows.attempt_so_far import attempt_result
from workflows.cancel_check import despite_cancel
from workflows.policies import AFTER_AGENT, AFTER_AGENT_BOUND, SHORT

__all__ = ["attempt_label", "record_attempt", "save_result"]


async def record_attempt(ref: AttemptRef, **fields: Any) -> AttemptResult:
    """Build the attempt's result from ``fields`` and persist it (``result.json``)."""
    result = attempt_result(ref, **fields)
    await save_result(ref, result)
    return result


async def save_result(ref: AttemptRef, result: AttemptResult, *, local: bool = False) -> None:
    """Persist the attempt's result (``result.json``).

    It retries for hours: a workflow that failed here would have the pair start a new
    attempt, and pay for a new session, for want of a file write. ``local``: as a local
    activity, run by the worker that runs the workflow within the same workflow task (it
    touches no container, so it needs no host), which saves a round trip per attempt.
    """
    summary = f"{attempt_label(ref)} · {result.exit_class} · result.json"
    if local:
        await despite_cancel(
            workflow.execute_local_activity_method(
                ResultActivities.record_attempt,
                result,
                start_to_close_timeout=SHORT,
                schedule_to_close_timeout=AFTER_AGENT_BOUND,
                retry_policy=AFTER_AGENT,
                summary=summary,
            )
        )
        return
    await despite_cancel(
        workflow.execute_activity_method(
            ResultActivities.record_attempt,
            result,
            start_to_close_timeout=SHORT,
            schedule_to_close_timeout=AFTER_AGENT_BOUND,
            retry_policy=AFTER_AGENT,
            summary=summary,
        )
    )


def attempt_label(ref: AttemptRef) -> str:
    """``task · lane · attempt n``: what every activity summary of the attempt starts with."""
    return f"{ref.task.task_id} · {ref.lane} · attempt {ref.attempt}"
