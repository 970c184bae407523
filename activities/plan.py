"""Plan activities: resolve the suite into a plan, persist the approved plan."""

from __future__ import annotations

import asyncio
import os

from temporalio import activity

from durabench.agents import get_agent
from durabench.configs import get_config, missing_mcp_env
from durabench.models import RecordRunInput, RunPlan, RunRequest, TaskRef
from durabench.paths import RunPaths
from durabench.settings import Settings
from durabench.tasks import load_suite

__all__ = ["PlanActivities"]


def _lanes(request: RunRequest) -> tuple[str, ...]:
    if request.config_mode == "baseline_only":
        return (request.baseline_config,)
    if request.config_mode == "full_only":
        return (request.full_config,)
    return (request.baseline_config, request.full_config)


class PlanActivities:
    """Planning; built in ``worker.py`` with the worker's settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @activity.defn(name="plan_run")
    async def plan_run(self, request: RunRequest) -> RunPlan:
        """Resolve the suite, check agent and configs, estimate, and write ``plan.json``."""
        return await asyncio.to_thread(self._plan, request)

    def _plan(self, request: RunRequest) -> RunPlan:
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
            estimated_agent_hours=sum(t.agent_timeout_sec for t in tasks) * len(lanes) / 3600,
            results_dir=str(paths.root),
            mcp_env_missing=tuple(
                name
                for c in configs
                if c.mcp is not None and agent.uses_mcp
                for name in missing_mcp_env(c.mcp, os.environ)
            ),
        )
        paths.root.mkdir(parents=True, exist_ok=True)
        paths.plan.write_text(plan.model_dump_json(indent=2))
        return plan

    @activity.defn(name="record_run")
    async def record_run(self, data: RecordRunInput) -> None:
        """Write ``run.json``: the approved plan and who approved it."""
        paths = RunPaths.for_run(self.settings.runs_dir, data.plan.request.run_id)
        paths.root.mkdir(parents=True, exist_ok=True)
        paths.run.write_text(data.model_dump_json(indent=2))
