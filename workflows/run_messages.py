"""What a person who sends the run a signal or update is told: its description, its refusal.

The UI lists every signal handler the workflow has, with its description (the
``__temporal_workflow_metadata`` query), and the SDK offers no way to leave one out. So
each says what it does and the input a person gives, and the one the run's own pairs send
says first that it is internal. The ``approve`` update's refusals say what to do instead.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from durabench.models.run import Approval, Control, PlanSummary, Rejection
    from durabench.planning.approval import approval_mismatches

__all__ = ["SIGNALS", "refusal", "who"]

SIGNALS = {
    "approve": (
        'Approve the plan and start the run. Input {"approver": "your name"}: the Web UI '
        "sends no identity of its own, so name yourself (without a name the sender's "
        'identity is recorded, or else "not named"). Same as `python -m starter approve RUN_ID`.'
    ),
    "reject": (
        'Refuse the plan: the run ends and starts nothing. Input {"rejected_by": "you", '
        '"reason": "why"}. Same as `python -m starter reject RUN_ID`.'
    ),
    "pause": (
        "Start no new pair or retry until `resume`; running attempts finish. Input "
        '{"by": "you", "reason": "why"} or {}.'
    ),
    "resume": 'Undo `pause`. Input {"by": "you"} or {}.',
    "set_parallel": "Change how many pairs run at once. Input a number, e.g. 4.",
}
"""Description of each signal, by signal name."""


def refusal(
    run_id: str,
    plan: PlanSummary | None,
    rejection: Rejection | None,
    taken: Approval | None,
    approval: Approval,
) -> str:
    """Why the ``approve`` update cannot take ``approval`` now, or ``""`` if it can."""
    if plan is None:
        return (
            f"run {run_id} has no plan yet: approve it once planning has finished "
            f"(`python -m starter status {run_id}` shows the phase)"
        )
    if rejection is not None:
        return f"run {run_id} was rejected by {rejection.rejected_by}: {rejection.reason}"
    if taken is not None:
        return f"run {run_id} is already approved (by {taken.approver} at {taken.approved_at})"
    problems = approval_mismatches(plan, approval)
    if problems:
        return (
            "approval refused: " + "; ".join(problems) + ". Check the plan with "
            f"`python -m starter status {run_id}`, or reject the run and plan the one you meant"
        )
    return ""


def who(control: Control | None) -> tuple[str, str]:
    """Who sent a pause or resume, and why (``no reason given``)."""
    control = control or Control()
    return control.by, control.reason or "no reason given"
