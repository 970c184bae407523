"""The plan as the rows a person reads before approving it.

One list for every place the plan is shown, so they never disagree: the terminal's table
(``starter run`` and ``starter status``) and the Markdown table of the run's details in
the Temporal Web UI.
"""

from __future__ import annotations

from typing import NamedTuple

from durabench.models.run import PlanSummary, RunRequest
from durabench.wording import counted

__all__ = ["PlanRow", "containers_at_once", "parallel_rows", "plan_rows", "request_rows"]


class PlanRow(NamedTuple):
    """One row of the plan."""

    key: str
    """What the row is."""
    value: str
    """Its value, as plain text."""
    alert: bool = False
    """Whether it is something to check before approving (shown in red)."""


def request_rows(req: RunRequest) -> list[PlanRow]:
    """What was asked, before any plan is made (the run's details from its start)."""
    rows = [
        PlanRow("model", req.agent.model),
        PlanRow("suite", req.source or f"rerun of {req.rerun_of} ({req.rerun} tasks)"),
        PlanRow("agent", req.agent.name),
        PlanRow("config mode", req.config_mode),
        PlanRow("parallel slots", str(req.parallel) if req.parallel else "derived by the plan"),
        PlanRow("category", req.category),
        PlanRow("infra retries", _retries(req)),
        PlanRow("token budget", _budget(req)),
        PlanRow("approval timeout", f"{req.approval_timeout_sec:g} s"),
    ]
    if req.service is not None:
        rows.append(PlanRow("service", req.service.url))
    return rows


def plan_rows(plan: PlanSummary) -> list[PlanRow]:
    """The parameters a person confirms before approving."""
    req = plan.request
    attempts = plan.task_count * len(plan.lanes)
    source = plan.selection_file or req.source
    if plan.selection_file and req.suite:
        source = f"{req.suite} from {plan.selection_file}"
    rows = [
        PlanRow("model", req.agent.model),
        PlanRow("suite" if not plan.selection_file else "selection", source),
        PlanRow("agent", req.agent.name),
        *(
            [PlanRow("agent CLI version", f"{plan.cli_version} ({plan.cli_version_note})")]
            if plan.cli_version
            else []
        ),
        PlanRow("config mode", f"{req.config_mode} ({', '.join(plan.lanes)})"),
        *parallel_rows(plan),
        PlanRow("category", req.category),
        PlanRow("tasks", str(plan.task_count)),
        PlanRow("attempts", f"{len(plan.lanes)} per task, {attempts} in all (+ infra retries)"),
        PlanRow("containers", f"{attempts}, {containers_at_once(plan)}"),
        PlanRow("sandboxes", f"{plan.sandbox}: {plan.sandbox_limits or 'limits not recorded'}"),
        *([PlanRow("worker lock", plan.worker_lock)] if plan.worker_lock else []),
        PlanRow("agent-hours (upper bound)", f"{plan.estimated_agent_hours:.2f}"),
        *cost_rows(plan),
        PlanRow("infra retries", _retries(req)),
        PlanRow("token budget", _budget(req)),
        PlanRow("results", plan.results_dir),
    ]
    if plan.account_slots is not None:
        rows.append(PlanRow("accounts", f"{plan.account_slots} usable slots; {plan.accounts_note}"))
    if req.rerun_of:
        rows.append(PlanRow("rerun of", f"{req.rerun_of} ({req.rerun} tasks)"))
    if plan.unpaired:
        without = f"{len(plan.unpaired)} task(s) without counterpart (ALLOW_UNPAIRED_SINGLE_CONFIG)"
        rows.append(PlanRow("unpaired", without, alert=True))
    if plan.mcp_env_missing:
        rows.append(PlanRow("MCP lane", f"{', '.join(plan.mcp_env_missing)} unset", alert=True))
    if req.service is not None:
        calls = req.service.calls(req.tasks_from_service)
        scale = f"pass_percentage / {req.service.scale:g} (or the result's max_score)"
        rows += [PlanRow("service", f"{req.service.url}, {calls}"), PlanRow("rewards", scale)]
    rows += [PlanRow("warning", w, alert=True) for w in plan.warnings]
    return rows


def parallel_rows(plan: PlanSummary) -> list[PlanRow]:
    """The parallel slots, then each source of the derivation with its number.

    A plan from before derivations has the number alone.
    """
    derivation = plan.parallelism
    if derivation is None:
        return [PlanRow("parallel slots", f"{plan.parallel}{_fewer_tasks(plan)}")]
    n = derivation.parallel
    if derivation.overridden:
        least = f"; derived: {derivation.derived}" if derivation.derived is not None else ""
        how = f"{n} (--parallel{least})"
    elif derivation.bound_by is not None:
        how = f"{n} (derived: the least of the sources below, bound by {derivation.bound_by})"
    else:
        how = f"{n} (the default: no source below sets a bound; --parallel N sets it)"
    rows = [PlanRow("parallel slots", how + _fewer_tasks(plan))]
    for bound in derivation.bounds:
        pairs = "no bound" if bound.pairs is None else counted(bound.pairs, "pair")
        taken = " ← bound" if bound.source == derivation.bound_by else ""
        rows.append(PlanRow(f"  from {bound.source}", f"{pairs}{taken}: {bound.detail}"))
    return rows


def _fewer_tasks(plan: PlanSummary) -> str:
    """Where the slots are more than the tasks: the pairs that can run at once."""
    n = plan.task_count
    if plan.parallel <= n:
        return ""
    return f"; {counted(n, 'task')}: at most {counted(n, 'pair')} at once"


def containers_at_once(plan: PlanSummary) -> str:
    """Containers at once: what ``parallel`` asks for, or fewer where a limit admits fewer.

    Two limits are enforced: the deployment's quota (across every host) and, on Docker,
    each host's own admission. A remote backend's host holds no sandbox, so only the
    quota bounds it.
    """
    asked = min(plan.parallel, plan.task_count) * len(plan.lanes)
    quota = plan.sandbox_quota
    host = plan.host_sandboxes if plan.sandbox == "docker" else None
    if quota is not None and quota < asked and (host is None or quota <= host):
        return (
            f"at most {quota} at once (DURABENCH_SANDBOX_QUOTA {quota}, enforced across "
            f"every worker host; the run asks for {asked})"
        )
    if host is not None and host < asked:
        return (
            f"at most {host} at once (host {plan.host_id} admits {host}: "
            "DURABENCH_MAX_SANDBOXES, and by memory as measured; "
            f"the run asks for {asked}, which more worker hosts give)"
        )
    if plan.sandbox != "docker" and quota is None:
        return (
            f"at most {asked} at once ({plan.sandbox}: no quota set; "
            "DURABENCH_SANDBOX_QUOTA bounds it)"
        )
    return f"at most {asked} at once"


def _retries(req: RunRequest) -> str:
    return f"{req.infra_retries} per arm, backoff from {req.infra_backoff_sec:g} s"


def _budget(req: RunRequest) -> str:
    return f"{req.budget_tokens:,} per attempt" if req.budget_tokens else "none"


def cost_rows(plan: PlanSummary) -> list[PlanRow]:
    """The price line (what ``approve --cost`` restates) and the spend cap."""
    rows = []
    if plan.cost is not None:
        unpriced = plan.cost.low_usd is None
        rows.append(PlanRow("expected cost", plan.cost.line(), alert=unpriced))
    cap = plan.request.max_spend_usd
    rows.append(PlanRow("spend cap", f"${cap:,.2f} over every host" if cap else "none"))
    return rows
