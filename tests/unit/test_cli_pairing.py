"""Pairs never mix CLI versions silently: gap-fill counterparts and reruns match versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.results import AttemptResult
from durabench.models.run import RunRequest
from durabench.planning.plan import make_plan
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite

MODEL = "claude-haiku-4-5"
FULL = "sourcegraph_full"


def _earlier_run(settings: Settings, run_id: str, versions: dict[str, str | None]) -> None:
    """A finished paired claude-code run of the pytorch suite; each lane ran ``versions``."""
    plan = make_plan(
        RunRequest(
            run_id=run_id, suite="pytorch", agent=AgentSpec(name="claude-code", model=MODEL)
        ),
        settings,
    )
    paths = RunPaths.for_run(settings.runs_dir, run_id)
    paths.plan.parent.mkdir(parents=True, exist_ok=True)
    paths.plan.write_text(plan.model_dump_json())
    for task in load_suite("pytorch", settings.home):
        for lane, version in versions.items():
            where = paths.attempt(task.task_id, lane, 1)
            where.mkdir(parents=True, exist_ok=True)
            result = AttemptResult(
                run_id=run_id,
                task_id=task.task_id,
                lane=lane,
                attempt=1,
                exit_class="completed",
                reward=1.0,
                agent="claude-code",
                model=MODEL,
                cli_version=version,
            )
            (where / "result.json").write_text(result.model_dump_json())


def _gap_fill(run_id: str, **options: str) -> RunRequest:
    return RunRequest(
        run_id=run_id,
        suite="pytorch",
        agent=AgentSpec(name="claude-code", model=MODEL, options=options),
        config_mode="baseline_only",
    )


def test_a_gap_fill_whose_counterpart_ran_another_version_is_refused_naming_both(
    tmp_path: Path,
) -> None:
    settings = Settings(home=tmp_path)
    _earlier_run(settings, "old", {"baseline": "2.0.14", FULL: "2.0.14"})
    with pytest.raises(ConfigError) as refused:
        make_plan(_gap_fill("fill"), settings)
    said = str(refused.value)
    assert "ran claude-code 2.0.14" in said and "this run would run 2.1.332" in said
    assert "run old" in said and "--agent-opt version=2.0.14" in said
    # Pinned to the version the counterparts ran, the gap-fill pairs with them.
    plan = make_plan(_gap_fill("fill", version="2.0.14"), settings)
    assert {c.run_id for c in plan.counterparts} == {"old"} and plan.unpaired == ()


def test_a_counterpart_with_no_recorded_version_does_not_count(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    _earlier_run(settings, "older", {"baseline": None, FULL: None})
    with pytest.raises(ConfigError, match="ran claude-code an unrecorded version"):
        make_plan(_gap_fill("fill"), settings)


def test_the_bypass_runs_unpaired_and_the_plan_says_the_versions_differ(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    _earlier_run(settings, "old", {"baseline": "2.0.14", FULL: "2.0.14"})
    request = _gap_fill("fill").model_copy(update={"allow_unpaired": True})
    plan = make_plan(request, settings)
    assert plan.counterparts == () and len(plan.unpaired) == 4
    assert any("2.0.14" in w and "2.1.332" in w for w in plan.warnings)


def test_a_matching_counterpart_counts(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    _earlier_run(settings, "same", {"baseline": "2.1.332", FULL: "2.1.332"})
    plan = make_plan(_gap_fill("fill"), settings)
    assert {c.run_id for c in plan.counterparts} == {"same"} and plan.warnings == ()


def test_a_rerun_runs_the_version_its_original_ran(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    _earlier_run(settings, "old", {"baseline": "2.0.14", FULL: "2.0.14"})
    rerun = RunRequest(run_id="again", suite="", rerun="all", rerun_of="old")
    plan = make_plan(rerun, settings)
    assert plan.request.agent.options == {"version": "2.0.14"} and plan.cli_version == "2.0.14"


def test_a_rerun_of_a_run_that_mixed_versions_is_refused_naming_them(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    _earlier_run(settings, "mixed", {"baseline": "2.0.14", FULL: "2.1.332"})
    rerun = RunRequest(run_id="again", suite="", rerun="all", rerun_of="mixed")
    with pytest.raises(ConfigError, match=r"ran claude-code 2\.0\.14 and 2\.1\.332"):
        make_plan(rerun, settings)
