"""Whether an approval matches the plan it approves.

A person confirms six parameters before money is spent: model, suite (or selection file),
config mode (and which full config), parallel slots, category and the expected cost. An
approval may restate any of them; each restated value must equal the plan's. Pure, so the
workflow's update validator and its signal handler give the same answer, and a test can
check it without a server.
"""

from __future__ import annotations

from typing import Any

from durabench.models.run import Approval, PlanSummary

__all__ = ["approval_mismatches", "approval_progress"]


def approval_progress(approval: Approval | None) -> dict[str, Any]:
    """The approval's fields of the run's ``progress`` answer (all empty before approval)."""
    if approval is None:
        return {"approved_by": None, "approved_at": None, "approval_note": ""}
    return {
        "approved_by": approval.approver,
        "approved_at": approval.approved_at,
        "approval_note": approval.note,
    }


def approval_mismatches(plan: PlanSummary, approval: Approval) -> list[str]:
    """One line per restated parameter that differs from the plan; empty when it matches."""
    req = plan.request
    planned: dict[str, object] = {
        "model": req.agent.model,
        "suite": req.source,
        "config_mode": req.config_mode,
        "full_config": req.full_config,
        "parallel": plan.parallel,
        "category": req.category,
        "cost": plan.cost.restated() if plan.cost is not None else None,
    }
    also = {"suite": req.suite}  # a selection file's run also answers to its suite name
    problems = []
    for name, expected in planned.items():
        stated = getattr(approval, name)
        if stated is not None and stated not in (expected, also.get(name, expected)):
            problems.append(f"{name} is {expected!r} in the plan, the approval says {stated!r}")
    return problems
