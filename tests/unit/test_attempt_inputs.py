"""The worker's checks of an attempt's input: task roots, mounts, plain versions.

A workflow input may come from anyone who can reach the task queue, so each check refuses
the hostile case (with what to do) and accepts what durabench itself plans.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities import SandboxActivities
from durabench.agents import CliAgent, get_agent
from durabench.attempt.inputs import (
    check_attempt_inputs,
    check_mounts,
    check_task_dir,
    mount_root,
    task_roots,
)
from durabench.errors import ConfigError, TaskFormatError
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef
from durabench.models.run import RunRequest, TaskRef
from durabench.planning.plan import make_plan
from durabench.settings.values import Settings
from durabench.tasks import BUILTIN_SUITES_DIR
from tests.unit_plan import unit_plan_activities

TASK = "tensor-gelu-001"
BUILTIN = BUILTIN_SUITES_DIR / "pytorch" / TASK


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


def _ref(task_dir: Path | str, agent: str = "oracle", **options: str) -> AttemptRef:
    model = "claude-haiku-4-5" if agent == "claude-code" else "none"
    return AttemptRef(
        run_id="r1",
        task=TaskRef(task_id=TASK, task_dir=str(task_dir)),
        lane="baseline",
        agent=AgentSpec(name=agent, model=model, options=options),
    )


def _replay_plan(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "plan.json").write_text(json.dumps({"cases": [{"exit_code": 0}]}))
    return where / "plan.json"


def test_task_dirs_under_the_bundled_suites_and_the_home_are_accepted(
    settings: Settings,
) -> None:
    roots = task_roots(settings)
    assert check_task_dir(BUILTIN, roots) == BUILTIN
    mine = settings.home / "suites" / "mine" / TASK
    shutil.copytree(BUILTIN, mine)
    assert check_task_dir(mine, roots) == mine.resolve()
    dataset = settings.runs_dir / "r1" / "dataset" / "q" / "q-1"  # written by the plan
    assert check_task_dir(dataset, roots) == dataset.resolve()


@pytest.mark.parametrize("task_dir", ["/etc", "/", "/root/.aws"])
def test_task_dirs_elsewhere_are_refused_with_the_fix(settings: Settings, task_dir: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_task_dir(task_dir, task_roots(settings))
    message = str(err.value)
    assert message.startswith(f"task dir {task_dir} is not under a task root of this worker")
    assert str(settings.home) in message and "DURABENCH_TASK_ROOTS" in message


def test_a_root_itself_and_dot_dot_escapes_are_refused(settings: Settings) -> None:
    roots = task_roots(settings)
    for task_dir in (settings.home, BUILTIN_SUITES_DIR, settings.home / "suites" / ".." / ".."):
        with pytest.raises(ConfigError, match="not under a task root"):
            check_task_dir(task_dir, roots)


def test_a_link_under_a_root_is_judged_by_where_it_leads(
    settings: Settings, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / TASK
    shutil.copytree(BUILTIN, outside)
    link = settings.home / "suites" / "linked" / TASK
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    with pytest.raises(ConfigError, match=rf"\(resolved: {outside}\) is not under a task root"):
        check_task_dir(link, task_roots(settings))
    to_builtin = settings.home / "suites" / "linked" / "builtin"
    to_builtin.symlink_to(BUILTIN)
    assert check_task_dir(to_builtin, task_roots(settings)) == BUILTIN


def test_extra_task_roots_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout, other = tmp_path / "csb", tmp_path / "other"
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DURABENCH_TASK_ROOTS", f"{checkout}{os.pathsep}{os.pathsep}{other}")
    settings = Settings.from_env()
    assert settings.task_roots == (checkout, other)
    assert check_task_dir(checkout / "b" / TASK, task_roots(settings))
    monkeypatch.setenv("DURABENCH_TASK_ROOTS", f"{checkout}{os.pathsep}relative/dir")
    with pytest.raises(ConfigError, match=r"relative path \(relative/dir\); give absolute"):
        Settings.from_env()


def test_mounts_only_below_the_homes_mounts_directory(settings: Settings, tmp_path: Path) -> None:
    root = mount_root(settings)
    markers = settings.home / "mounts" / "markers"
    assert check_mounts({str(markers): "/m"}, root) == {str(markers.resolve()): "/m"}
    assert check_mounts({}, root) == {}
    refused = [
        "/etc",
        str(settings.home),
        str(settings.home / "runs"),
        str(settings.home / "agent-tools"),
        str(settings.home / "mounts"),
        str(settings.home / "mounts" / ".." / "runs"),
    ]
    for host in refused:
        with pytest.raises(ConfigError, match=f"mount host directory {host} into the sandbox"):
            check_mounts({str(markers): "/m", host: "/x"}, root)
    link = settings.home / "mounts" / "link"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="DURABENCH_HOME/mounts/ of the worker"):
        check_mounts({str(link): "/m"}, root)


@pytest.mark.parametrize("version", ["2.1.332", "2", "1.0", "1.2.3.4", "1.0.0-beta.2", "1.0.0+b5"])
def test_plain_versions_are_accepted(version: str) -> None:
    CliAgent.check_version(version)
    assert get_agent("claude-code", {"version": version}).install_spec().packages == (  # type: ignore[union-attr]
        f"@anthropic-ai/claude-code@{version}",
    )


@pytest.mark.parametrize(
    "version",
    [
        "latest",
        "next",
        "^2.1.0",
        "2.x",
        ">=1.0.0",
        "1.0.0 || 2.0.0",
        "2.1.332\n",
        "https://evil.example/cli.tgz",
        "git+ssh://git@github.com/x/y.git",
        "github:x/y",
        "file:../x",
        "../../tmp/x",
        "/tmp/pkg",
        "1.0.0-../../x",
        "npm:other@1.0.0",
    ],
)
def test_versions_npm_would_fetch_from_elsewhere_are_refused(version: str) -> None:
    with pytest.raises(ConfigError, match="is not a plain version; give a version number"):
        CliAgent.check_version(version)
    with pytest.raises(ConfigError, match="is not a plain version"):
        get_agent("codex-cli", {"version": version})


def test_a_bad_version_is_refused_at_plan_time(settings: Settings) -> None:
    request = RunRequest(
        run_id="r",
        suite="pytorch",
        agent=AgentSpec(
            name="gemini-cli",
            model="gemini-2.5-pro",
            options={"version": "https://evil.example/x.tgz"},
        ),
    )
    with pytest.raises(ConfigError, match="not a plain version"):
        make_plan(request, settings)


def test_the_worker_checks_the_task_dir_before_reading_it(settings: Settings) -> None:
    with pytest.raises(ConfigError, match="task dir /etc is not under a task root"):
        check_attempt_inputs(_ref("/etc"), settings, {})
    missing = settings.home / "suites" / "s" / "gone"  # allowed, so now it is read
    with pytest.raises(TaskFormatError, match="not a directory"):
        check_attempt_inputs(_ref(missing), settings, {})


def test_the_worker_checks_versions_and_mounts(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a plain version"):
        check_attempt_inputs(_ref(BUILTIN, "claude-code", version="latest"), settings, {})
    with pytest.raises(ConfigError, match="not a plain version"):  # whatever the agent
        check_attempt_inputs(_ref(BUILTIN, "oracle", version="file:/x"), settings, {})
    plan = str(_replay_plan(tmp_path / "replay"))
    with pytest.raises(ConfigError, match="mount host directory /etc"):
        check_attempt_inputs(_ref(BUILTIN, "replay", plan=plan, marker_dir="/etc"), settings, {})
    markers = settings.home / "mounts" / "markers"
    setup, mounts = check_attempt_inputs(
        _ref(BUILTIN, "replay", plan=plan, marker_dir=str(markers)), settings, {}
    )
    assert mounts == {str(markers.resolve()): "/durabench-markers"}
    assert setup.task.task_dir == str(BUILTIN)


async def test_sandbox_activities_refuse_before_touching_anything(
    settings: Settings, tmp_path: Path
) -> None:
    acts, env = SandboxActivities(settings, "q"), ActivityEnvironment()
    hostile = _ref("/etc")
    phases: list[tuple[Callable[[Any], Awaitable[object]], object]] = [
        (acts.provision_sandbox, hostile),
        (acts.verify, hostile),
    ]  # teardown needs only the attempt's name: it removes a container, whatever its task
    for activity, arg in phases:
        with pytest.raises(ApplicationError, match="task dir /etc is not under") as err:
            await env.run(activity, arg)
        assert (err.value.type, err.value.non_retryable) == ("ConfigError", True)
    plan = str(_replay_plan(tmp_path / "replay"))
    mounting = _ref(BUILTIN, "replay", plan=plan, marker_dir=str(tmp_path / "m"))
    with pytest.raises(ApplicationError, match=f"mount host directory {tmp_path / 'm'}"):
        await env.run(acts.provision_sandbox, mounting)
    assert not settings.runs_dir.exists()  # no attempt directory was made


async def test_a_plan_with_tasks_outside_the_roots_is_refused_until_a_root_is_added(
    settings: Settings, tmp_path: Path
) -> None:
    checkout = tmp_path / "csb"
    shutil.copytree(BUILTIN, checkout / "benchmarks" / "b" / TASK)
    entry = {"task_id": TASK, "benchmark": "b", "task_dir": f"b/{TASK}"}
    (checkout / "configs").mkdir()
    (checkout / "configs" / "selected_benchmark_tasks.json").write_text(
        json.dumps({"tasks": [entry]})
    )
    request = RunRequest(run_id="r", suite="", benchmarks_dir=str(checkout))
    env = ActivityEnvironment()
    to_roots = "add the directory that holds it to DURABENCH_TASK_ROOTS"
    with pytest.raises(ApplicationError, match=to_roots):
        await env.run(unit_plan_activities(settings).plan_run, request)
    added = settings.model_copy(update={"task_roots": (checkout,)})
    summary = await env.run(unit_plan_activities(added).plan_run, request)
    assert summary.task_count == 1


def test_what_agents_wrote_under_runs_is_never_a_task_root(settings: Settings) -> None:
    kept = settings.home / "runs" / "r1" / "tasks" / "t" / "baseline" / "attempt-1" / "agent"
    dataset = settings.home / "runs" / "r1" / "dataset" / "questions" / "q-1"
    for path in (kept / "evil", dataset):
        path.mkdir(parents=True)
    with pytest.raises(ConfigError, match="is not under a task root"):
        check_task_dir(kept / "evil", task_roots(settings))
    assert check_task_dir(dataset, task_roots(settings)) == dataset.resolve()
