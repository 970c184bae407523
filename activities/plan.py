"""Plan activities: resolve the suite into a plan, hand out its tasks in pages, persist it.

The full task list lives in ``plan.json``; workflows carry only the summary and read the
tasks a page at a time, so a 10,000-task suite costs no more history than a small one.
"""

from __future__ import annotations

import asyncio
import os
from functools import lru_cache
from pathlib import Path

from temporalio import activity

from durabench.agents import get_agent
from durabench.configs import get_config, missing_mcp_env
from durabench.models import (
    PlanPage,
    PlanPageInput,
    PlanSummary,
    RecordRunInput,
    RunPlan,
    RunRequest,
    TaskRef,
)
from durabench.paths import RunPaths
from durabench.results_io import atomic_write
from durabench.settings import Settings
from durabench.tasks import load_suite

__all__ = ["PlanActivities"]


def _lanes(request: RunRequest) -> tuple[str, ...]:
    if request.config_mode == "baseline_only":
        return (request.baseline_config,)
    if request.config_mode == "full_only":
        return (request.full_config,)
    return (request.baseline_config, request.full_config)


@lru_cache(maxsize=8)
def _read_plan(path: Path, mtime_ns: int) -> RunPlan:
    return RunPlan.model_validate_json(path.read_text())


class PlanActivities:
    """Planning; built in ``worker.py`` with the worker's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @activity.defn(name="plan_run")
    async def plan_run(self, request: RunRequest) -> PlanSummary:
        """Resolve the suite, check agent and configs, estimate, and write ``plan.json``."""
        return await asyncio.to_thread(self._plan, request)

    def _plan(self, request: RunRequest) -> PlanSummary:
        lanes = _lanes(request)
        configs = [get_config(lane) for lane in lanes]
        agent = get_agent(request.agent, request.agent_options)
        specs = load_suite(request.suite, self.settings.home)
        for spec in specs:
            agent.check_task(spec)
        multiplier = self.settings.timeout_multiplier
        tasks = tuple(
            TaskRef(
                task_id=s.task_id,
                task_dir=s.task_dir,
                agent_timeout_sec=s.time_limit_sec * multiplier,
                verifier_timeout_sec=s.verifier_timeout_sec,
                build_timeout_sec=s.build_timeout_sec,
            )
            for s in specs
        )
        paths = RunPaths.for_run(self.settings.runs_dir, request.run_id)
        plan = RunPlan(
            request=request,
            lanes=lanes,
            tasks=tasks,
            task_count=len(tasks),
            estimated_agent_hours=sum(t.agent_timeout_sec for t in tasks) * len(lanes) / 3600,
            results_dir=str(paths.root),
            mcp_env_missing=tuple(
                name
                for c in configs
                if c.mcp is not None and agent.uses_mcp
                for name in missing_mcp_env(c.mcp, os.environ)
            ),
        )
        atomic_write(paths.plan, plan.model_dump_json(indent=2))
        return plan.summary()

    @activity.defn(name="plan_page")
    async def plan_page(self, page: PlanPageInput) -> PlanPage:
        """Tasks ``offset`` to ``offset + limit`` of the run's plan."""
        path = RunPaths.for_run(self.settings.runs_dir, page.run_id).plan
        plan = await asyncio.to_thread(_read_plan, path, path.stat().st_mtime_ns)
        return PlanPage(tasks=plan.tasks[page.offset : page.offset + page.limit])

    @activity.defn(name="record_run")
    async def record_run(self, data: RecordRunInput) -> None:
        """Write ``run.json``: the approved plan and who approved it."""
        paths = RunPaths.for_run(self.settings.runs_dir, data.plan.request.run_id)
        atomic_write(paths.run, data.model_dump_json(indent=2))
