"""Pairs a run's spend cap left unstarted, and the command that runs them with a higher cap.

A capped run starts a pair only when both lanes are affordable, so a pair is run whole or
not at all; the ones left are listed, never silently dropped. Rerunning the run's
``infra`` tasks (``--rerun infra``) takes exactly them, with the pairs whose lane the cap
stopped mid-session (``infra_spend_cap``).
"""

from __future__ import annotations

import shlex

from durabench.models.results import RunResult
from durabench.models.run import RunRequest
from durabench.text_safety import md_escape

__all__ = ["continue_command", "cut_by_cap", "not_run", "not_run_lines"]


def not_run(result: RunResult) -> list[str]:
    """Tasks of a capped run with no attempt, in plan order (none: an uncapped run)."""
    if result.plan.request.max_spend_usd is None:
        return []
    attempted = {a.task_id for a in result.attempts}
    return [t.task_id for t in result.plan.tasks if t.task_id not in attempted]


def cut_by_cap(result: RunResult) -> list[str]:
    """Tasks of which a lane was stopped by the cap mid-session (``infra_spend_cap``)."""
    cut = {a.task_id for a in result.attempts if a.exit_class == "infra_spend_cap"}
    return [t.task_id for t in result.plan.tasks if t.task_id in cut]


def continue_command(request: RunRequest) -> str:
    """The command that runs what the cap left, with twice the cap (edit it to suit)."""
    cap = (request.max_spend_usd or 0.0) * 2
    words = ["python", "-m", "starter", "run", "--rerun", "infra", "--from", request.run_id]
    words += ["--agent", request.agent.name, "--model", request.agent.model]
    words += ["--max-spend", f"{cap:.2f}"]
    return shlex.join(words)


def not_run_lines(result: RunResult) -> list[str]:
    """The report's section of pairs not run (none: nothing to say)."""
    left, cut = not_run(result), cut_by_cap(result)
    if not left and not cut:
        return []
    cap = result.plan.request.max_spend_usd or 0.0
    return [
        "",
        "## Not run: spend cap",
        "",
        f"{len(left)} pair(s) were not started and {len(cut)} cut short: the run's spend cap "
        f"(${cap:,.2f}) could not pay for more. To run them with a higher cap:",
        "",
        f"    {continue_command(result.plan.request)}",
        "",
        *(f"- {md_escape(task)}: not run: spend cap" for task in left),
        *(f"- {md_escape(task)}: cut short by the spend cap (excluded)" for task in cut),
    ]
