"""Readers of earlier runs see every host's runs: the store's index is pulled first.

A single-config plan looks for counterparts in earlier runs; with an object store, those
runs may have been made on another host. The store is a real S3-compatible server on
loopback (moto's server mode); each "host" is its own ``DURABENCH_HOME``.
"""

from __future__ import annotations

from pathlib import Path

from temporalio.testing import ActivityEnvironment

from durabench.models.agent import AgentSpec
from durabench.models.audit import AuditReport
from durabench.models.results import AttemptResult, RunResult
from durabench.models.run import RunPlan, RunRequest
from durabench.planning.plan import make_plan
from durabench.results.dashboard import entry_of, publish
from durabench.results.files import load_results, write_reports
from durabench.results.scoring import compute_scorecard
from durabench.results.store import LocalStore, ObjectStore, open_store, pulled, push
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.s3_server import s3_endpoint_fixture, s3_url_fixture  # noqa: F401 (fixtures)
from tests.unit.results_set import ATTEMPTS, EXCLUDED, LANES, TASKS, hand_result
from tests.unit_plan import unit_plan_activities

M1 = AgentSpec(model="m-1")


def _baseline_run(settings: Settings, run_id: str) -> RunPaths:
    """A paired run whose baseline attempts all completed (with a transcript), pushed."""
    plan = make_plan(RunRequest(run_id=run_id, suite="pytorch", agent=M1), settings)
    paths = RunPaths.for_run(settings.runs_dir, run_id)
    paths.root.mkdir(parents=True)
    paths.plan.write_text(plan.model_dump_json())
    for task in load_suite("pytorch", settings.home):
        where = paths.attempt(task.task_id, "baseline", 1)
        (where / "agent").mkdir(parents=True)
        (where / "agent" / "stdout.txt").write_text("transcript")
        result = AttemptResult(
            run_id=run_id,
            task_id=task.task_id,
            lane="baseline",
            attempt=1,
            exit_class="completed",
            reward=1.0,
            agent=M1.name,
            model=M1.model,
        )
        (where / "result.json").write_text(result.model_dump_json())
    push(settings, paths)
    return paths


async def test_a_gap_fill_on_another_host_finds_counterparts_in_the_store(
    tmp_path: Path, url: str
) -> None:
    made = Settings(home=tmp_path / "a", results_url=url)
    _baseline_run(made, "old")
    other = Settings(home=tmp_path / "b", results_url=url)  # empty home, same store
    pulled(other, "b")  # as `publish`'s audit does
    fill = RunRequest(run_id="fill", suite="pytorch", agent=M1, config_mode="full_only")

    await ActivityEnvironment().run(unit_plan_activities(other).plan_run, fill)

    plan = RunPlan.model_validate_json(RunPaths.for_run(other.runs_dir, "fill").plan.read_text())
    assert plan.counterparts and {c.run_id for c in plan.counterparts} == {"old"}
    assert plan.unpaired == ()
    old = RunPaths.for_run(other.runs_dir, "old")
    assert old.plan.is_file() and old.attempt_results()
    assert not list(old.root.rglob("stdout.txt"))  # only the index, not transcripts


def test_the_index_holds_plans_and_attempt_results_only(tmp_path: Path, url: str) -> None:
    made = Settings(home=tmp_path / "a", results_url=url)
    paths = _baseline_run(made, "old")
    (paths.results).write_text("{}")
    push(made, paths, paths.results)
    here = tmp_path / "b" / "runs"

    ObjectStore(url).pull_index(here)

    pulled = sorted(p.relative_to(here).as_posix() for p in here.rglob("*") if p.is_file())
    assert pulled and "old/plan.json" in pulled
    assert all(p == "old/plan.json" or p.endswith("/result.json") for p in pulled)
    assert all("/attempt-1/" in p for p in pulled if p != "old/plan.json")


def test_the_local_store_index_is_the_runs_directory(tmp_path: Path) -> None:
    LocalStore(tmp_path / "runs").pull_index(tmp_path / "runs")
    assert not (tmp_path / "runs").exists()  # nothing to fetch, nothing made


def _results(settings: Settings, run_id: str, result: RunResult) -> RunPaths:
    """``result`` as run ``run_id``'s results and reports, pushed."""
    plan = result.plan.model_copy(
        update={"request": result.plan.request.model_copy(update={"run_id": run_id})}
    )
    paths = RunPaths.for_run(settings.runs_dir, run_id)
    write_reports(paths, result.model_copy(update={"plan": plan}))
    push(settings, paths)
    return paths


def test_publish_on_another_host_reads_the_run_from_the_store_and_keeps_the_others(
    tmp_path: Path, url: str
) -> None:
    made = Settings(home=tmp_path / "a", results_url=url)
    board = tmp_path / "dashboard.json"  # one dashboard file, published from either host
    _results(made, "a", hand_result())
    first = publish(made.runs_dir, board, "a", AuditReport(run_id="a", clean=True))
    kept = tuple(x for x in ATTEMPTS if x.task_id != "t1")
    card = compute_scorecard(kept, TASKS, LANES, EXCLUDED)
    fewer = hand_result().model_copy(update={"attempts": kept, "scorecard": card})
    _results(made, "a", fewer)  # "a" rescored on the first host after it was published
    _results(made, "b", hand_result())
    other = Settings(home=tmp_path / "b", results_url=url)  # empty home, same store
    pulled(other, "b")  # as `publish`'s audit does

    built = publish(
        other.runs_dir, board, "b", AuditReport(run_id="b", clean=True), store=open_store(other)
    )
    entries = {e.run_id: e for e in built.runs}
    assert entries["a"] == first.runs[0]  # as audited and published: not rebuilt unaudited
    assert not RunPaths.for_run(other.runs_dir, "a").results.exists()

    again = publish(
        other.runs_dir, board, "a", AuditReport(run_id="a", clean=True), store=open_store(other)
    )
    entry = {e.run_id: e for e in again.runs}["a"]  # published again: read from the store
    now = entry_of(load_results(RunPaths.for_run(made.runs_dir, "a")))
    assert (entry.pairs_compared, entry.mean_delta) == (now.pairs_compared, now.mean_delta)
    assert entry.pairs_compared != first.runs[0].pairs_compared
    assert not RunPaths.for_run(other.runs_dir, "a").report_html.exists()  # results only
