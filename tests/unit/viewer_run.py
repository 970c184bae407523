"""A run directory to view: the hand-worked results set, its numbers as stated by hand.

Attempt t1 / baseline / 1 kept a trajectory with a tool call, verifier output and a
gateway ledger; its agent's words carry markup that must show as text.
"""

from __future__ import annotations

import json
from pathlib import Path

from durabench.agents.atif import (
    AtifAgent,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)
from durabench.models.results import RunResult
from durabench.results.files import write_reports
from durabench.settings.paths import TRAJECTORY, RunPaths
from tests.unit.results_set import hand_result

HOSTILE = "<script>alert('pwned')</script><img src=x onerror=alert(1)>"
"""What a hostile agent prints, hoping a viewer renders it."""


def _trajectory() -> Trajectory:
    call = ToolCall(
        tool_call_id="call-1", function_name="Bash", arguments={"command": "pytest -q tests"}
    )
    return Trajectory(
        session_id="s-1",
        agent=AtifAgent(name="claude-code", version="2.1.332", model_name="m"),
        steps=[
            Step(step_id=1, source="user", message="Fix the failing gelu test."),
            Step(
                step_id=2,
                source="agent",
                message=f"Running the tests first. {HOSTILE}",
                tool_calls=[call],
                observation=Observation(
                    results=[ObservationResult(source_call_id="call-1", content="3 passed")]
                ),
            ),
            Step(step_id=3, source="agent", message="Done, all tests pass."),
        ],
    )


def write_attempts(runs_dir: Path, result: RunResult) -> RunPaths:
    """``result``'s plan and attempts under ``runs_dir``, not yet reported; its paths."""
    paths = RunPaths.for_run(runs_dir, result.plan.request.run_id)
    paths.root.mkdir(parents=True)
    paths.plan.write_text(result.plan.model_dump_json())
    for a in result.attempts:
        where = paths.attempt(a.task_id, a.lane, a.attempt)
        where.mkdir(parents=True)
        (where / "result.json").write_text(a.model_dump_json())
    return paths


def write_run(runs_dir: Path) -> RunPaths:
    """The hand-worked run ``hand`` under ``runs_dir``, reported; its paths."""
    hand = hand_result()
    paths = write_attempts(runs_dir, hand)
    where = paths.attempt("t1", "baseline", 1)
    (where / TRAJECTORY).parent.mkdir(parents=True)
    (where / TRAJECTORY).write_text(_trajectory().to_json())
    (where / "verifier").mkdir()
    (where / "verifier" / "reward.txt").write_text("1\n")
    (where / "verifier" / "verifier-stdout.txt").write_text("tests/test_gelu.py ... 3 passed\n")
    entry = {"at": 1767225600.0, "provider": "anthropic", "path": "/v1/messages", "status": 200}
    entry["usage"] = {"model": "m", "input": 1000, "output": 100}
    (where / "gateway.jsonl").write_text(json.dumps(entry) + "\n")
    write_reports(paths, hand)  # the stated lanes and scorecard, not a rebuild of them
    return paths
