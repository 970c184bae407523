"""The dashboard file: every published run in one JSON document, rebuilt in one step.

Publishing a run audits it, builds its entry from its ``results.json`` and replaces the
file atomically: readers never see half a dashboard. Every other entry is kept exactly as
it was published (and audited): its results directory may have been edited since, by
anyone who can write to it or to the bucket, and an entry is only ever written from an
audit of that run. To bring a rescored run up to date, publish it again.
Runs that measured the wrong model, or measured nothing, are refused; so is a run that
fails its audit (``starter audit``), unless forced, and then the entry keeps the findings.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from durabench.errors import ConfigError
from durabench.models.audit import AuditReport
from durabench.models.results import RunResult
from durabench.results.files import atomic_write, load_results
from durabench.results.run_versions import lane_cli_versions, lane_images, mixed_pairs
from durabench.results.store import LocalStore, ResultStore
from durabench.settings.paths import RunPaths

__all__ = ["Dashboard", "DashboardEntry", "entry_of", "publish", "refusal"]


class DashboardEntry(BaseModel):
    """One published run."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    suite: str
    agent: str
    model: str
    category: str
    """staging or official."""
    lanes: dict[str, float | None]
    """Mean reward per lane over scored attempts."""
    pairs_compared: int
    """Pairs in the paired comparison."""
    mean_delta: float | None
    """MCP minus baseline, mean over tasks."""
    ci: tuple[float, float] | None
    """Its 95% paired bootstrap CI."""
    mcnemar_p: float | None
    """McNemar's exact p on pass/fail."""
    excluded_pairs: int
    """Pairs not scored."""
    cost_usd: float
    """Total cost of the run's priced attempts."""
    cost_unpriced: int = 0
    """Attempts whose model had no price: not in ``cost_usd`` (never counted as $0)."""
    cost_delta_usd: float | None = None
    """MCP minus baseline cost per task, over the priced pairs the reward compares."""
    cost_ci: tuple[float, float] | None = None
    """Its 95% paired bootstrap CI."""
    cli_versions: dict[str, tuple[str, ...]] = {}
    """The agent CLI versions each lane ran (empty: no CLI, or entries from before)."""
    agent_images: dict[str, tuple[str, ...]] = {}
    """The images each lane's agent ran in, by short id."""
    mixed_cli_versions: tuple[str, ...] = ()
    """Tasks whose attempts ran more than one CLI version."""
    ledger_checked: bool | None = None
    """Whether its audit held the attempts against their Temporal history (``False``: the
    history was gone, only the files were checked; ``None``: published before audits)."""
    forced: tuple[str, ...] = ()
    """The audit's findings, when the run was published anyway (``--force``)."""


class Dashboard(BaseModel):
    """The whole file."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    """Format version."""
    generated_at: str
    """When it was rebuilt (UTC, ISO 8601)."""
    runs: tuple[DashboardEntry, ...]
    """Published runs, by run id."""


def refusal(result: RunResult) -> str | None:
    """Why ``result`` must not be published, or ``None``."""
    mismatched = [a for a in result.attempts if "MODEL MISMATCH" in a.reason]
    if mismatched:
        a = mismatched[0]
        return (
            f"{len(mismatched)} attempt(s) measured another model than requested "
            f"(e.g. {a.task_id} / {a.lane} / attempt {a.attempt}: {a.reason})"
        )
    if not any(a.included for a in result.attempts):
        return "no attempt is a model data point: every attempt was infra or unscored"
    return None


def entry_of(result: RunResult) -> DashboardEntry:
    """The entry ``result`` makes, before its audit is noted on it."""
    req, card = result.plan.request, result.scorecard
    comp = card.comparison if card else None
    ci = (comp.ci_low, comp.ci_high) if comp and comp.ci_low is not None else None
    cost = card.cost if card else None
    return DashboardEntry(
        run_id=req.run_id,
        suite=req.suite,
        agent=req.agent.name,
        model=req.agent.model,
        category=req.category,
        lanes={s.lane: s.mean_reward for s in result.lanes},
        pairs_compared=len(comp.tasks) if comp else 0,
        mean_delta=comp.mean_delta if comp else None,
        ci=ci,
        mcnemar_p=comp.mcnemar_p if comp else None,
        excluded_pairs=len(result.excluded),
        cost_usd=card.totals[-1].cost_usd if card else 0.0,
        cost_unpriced=card.totals[-1].cost_unpriced if card else 0,
        cost_delta_usd=cost.mean_delta_usd if cost else None,
        cost_ci=(cost.ci_low_usd, cost.ci_high_usd)
        if cost and cost.ci_low_usd is not None and cost.ci_high_usd is not None
        else None,
        cli_versions=lane_cli_versions(result.attempts, result.plan.lanes),
        agent_images=lane_images(result.attempts, result.plan.lanes),
        mixed_cli_versions=tuple(mixed_pairs(result.attempts)),
    )


def publish(
    runs_dir: Path,
    dashboard: Path,
    run_id: str,
    audit: AuditReport,
    force: bool = False,
    store: ResultStore | None = None,
    *,
    history_expected: bool = True,
) -> Dashboard:
    """Add (or replace) ``run_id``'s entry in ``dashboard``, given the run's ``audit``.

    The run's ``results.json`` is fetched from ``store`` (the runs directory when none)
    before it is read: it may have been made, or rescored, on another host. Other entries
    are kept as they are.

    ``history_expected``: a Temporal server that could hold the run's history answers or is
    configured, so an audit of the files only (``audit.ledger_skipped``) is refused unless
    ``force``: a run renamed, or copied from elsewhere, is never held against nothing. Pass
    ``False`` only when no server is configured and none answers.

    Raises:
        ConfigError: the run has no results or is refused, failed its audit, or was audited
            on its files only while ``history_expected``, and ``force`` is off; the message
            says why.
        ResultStoreError: the object store refused or could not be reached.
    """
    store = store or LocalStore(runs_dir)
    result = load_results(_pulled(store, RunPaths.for_run(runs_dir, run_id)))
    why = refusal(result)
    if why:
        raise ConfigError(f"run {run_id} is not published: {why}")
    if audit.findings and not force:
        raise ConfigError(
            f"run {run_id} is not published: its audit found {len(audit.findings)} "
            f"problem(s), first {audit.findings[0].line()}; see `python -m starter audit "
            f"{run_id}`, or publish it anyway with --force (the findings go into its entry)"
        )
    unread = audit.ledger_skipped if history_expected else ""
    if unread and not force:
        raise ConfigError(
            f"run {run_id} is not published: its audit checked the files only ({unread}), "
            "while a Temporal server that could hold its history is configured or answers; "
            f"audit it against the server that ran it (`python -m starter audit {run_id}` "
            "with its TEMPORAL_ADDRESS), or publish it anyway with --force (the entry says so)"
        )
    old = Dashboard.model_validate_json(dashboard.read_text()) if dashboard.exists() else None
    previous = {e.run_id: e for e in old.runs} if old else {}
    forced = audit.lines() + ((f"[ledger] not checked: {unread}",) if unread else ())
    noted = {"ledger_checked": not audit.ledger_skipped, "forced": forced}
    entries = {**previous, run_id: entry_of(result).model_copy(update=noted)}
    built = Dashboard(
        generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        runs=tuple(entries[k] for k in sorted(entries)),
    )
    atomic_write(dashboard, built.model_dump_json(indent=2))
    return built


def _pulled(store: ResultStore, paths: RunPaths) -> RunPaths:
    """``paths``, with the run's ``results.json`` (all the dashboard reads) fetched."""
    store.pull(paths, paths.results)
    return paths
