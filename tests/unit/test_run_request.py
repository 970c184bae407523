"""``starter run``'s options, one at a time, as the request they build; and their refusals.

:func:`build_request` is pure: each test names the options it sets and reads the request,
with no Temporal, Docker or environment. The last tests hold the command to it: its
parameters are :class:`RunOptions`' fields, with the same defaults.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click
import pytest

from durabench.ids import check_id
from durabench.models.run import RunRequest
from durabench.settings.values import Settings
from starter.run import run
from starter.run_request import RunOptions, build_request, new_run_id, run_stamp

STAMP = "20261127-141500-abcd"


def _settings(tmp_path: Path, **fields: Any) -> Settings:
    return Settings(home=tmp_path, **fields)


def _request(tmp_path: Path, *, allow_unpaired: bool = False, **options: Any) -> RunRequest:
    opts = RunOptions(**({"suite": "pytorch"} | options))
    return build_request(opts, _settings(tmp_path), allow_unpaired=allow_unpaired, stamp=STAMP)


def test_a_suite_alone_asks_for_a_paired_run_with_the_defaults(tmp_path: Path) -> None:
    request = _request(tmp_path)
    assert request == RunRequest(run_id=f"pytorch-{STAMP}", suite="pytorch")


@pytest.mark.parametrize(
    ("options", "prefix"),
    [
        ({"suite": "pytorch", "selection": "/x/sel.json"}, "pytorch"),
        ({"suite": "", "selection": "/x/my sel.json"}, "my-sel"),
        ({"suite": "", "benchmarks_dir": "/x/b"}, "run"),
        ({"suite": "", "rerun": "failed", "rerun_of": "r1"}, "r1"),
        ({"suite": "", "service_url": "http://127.0.0.1:1", "dataset_name": "ds"}, "ds"),
        ({"suite": "", "dataset_file": "/x/q.json", "service_url": "http://127.0.0.1:1"}, "q"),
    ],
)
def test_a_generated_run_id_starts_with_what_the_run_is_of(
    tmp_path: Path, options: dict[str, Any], prefix: str
) -> None:
    assert _request(tmp_path, **options).run_id == f"{prefix}-{STAMP}"


def test_a_run_id_given_is_the_run_id(tmp_path: Path) -> None:
    assert _request(tmp_path, run_id="mine").run_id == "mine"


def test_generated_run_ids_are_unique_ids() -> None:
    stamps = {run_stamp() for _ in range(20)}
    assert len(stamps) > 1
    for stamp in stamps:
        check_id(new_run_id("a suite/with: odd text", stamp), "run id")


def test_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    service = {"service_url": "http://127.0.0.1:1"}
    request = _request(
        tmp_path, selection="s.json", benchmarks_dir="b", dataset_file="d.json", **service
    )
    assert request.selection == str(tmp_path / "s.json")
    assert request.benchmarks_dir == str(tmp_path / "b")
    assert request.dataset_file == str(tmp_path / "d.json")


@pytest.mark.parametrize(
    ("options", "field", "value"),
    [
        ({"full_config": "mine_full"}, "full_config", "mine_full"),
        ({"config_mode": "baseline_only"}, "config_mode", "baseline_only"),
        ({"config_mode": "full_only"}, "config_mode", "full_only"),
        ({"rerun": "infra", "rerun_of": "r1"}, "rerun", "infra"),
        ({"rerun": "all", "rerun_of": "r1"}, "rerun_of", "r1"),
        ({"parallel": 3}, "parallel", 3),
        ({"category": "official"}, "category", "official"),
        ({"infra_retries": 0}, "infra_retries", 0),
        ({"infra_backoff": 0.0}, "infra_backoff_sec", 0.0),
        ({"budget": 5}, "budget_tokens", 5),
        ({"max_spend": 25.0}, "max_spend_usd", 25.0),
        ({"approval_timeout": 7.5}, "approval_timeout_sec", 7.5),
        ({"allow_unpaired": True}, "allow_unpaired", True),
    ],
)
def test_each_run_option_sets_its_field(
    tmp_path: Path, options: dict[str, Any], field: str, value: object
) -> None:
    assert getattr(_request(tmp_path, **options), field) == value


def test_settings_fill_what_the_options_leave_out(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        infra_retries=5,
        infra_backoff_sec=3.0,
        approval_timeout_sec=9.0,
        gateway_budget_tokens=11,
        max_spend_usd=40.0,
    )
    left_out = build_request(RunOptions(suite="p"), settings, allow_unpaired=False, stamp=STAMP)
    assert (left_out.infra_retries, left_out.infra_backoff_sec) == (5, 3.0)
    assert (left_out.approval_timeout_sec, left_out.budget_tokens) == (9.0, 11)
    assert left_out.max_spend_usd == 40.0
    given = RunOptions(
        suite="p", infra_retries=0, infra_backoff=0.0, approval_timeout=1.0, budget=2
    )
    request = build_request(given, settings, allow_unpaired=False, stamp=STAMP)
    assert (request.infra_retries, request.infra_backoff_sec) == (0, 0.0)
    assert (request.approval_timeout_sec, request.budget_tokens) == (1.0, 2)


def test_the_agent_its_model_and_options_with_effort_last(tmp_path: Path) -> None:
    agent = _request(
        tmp_path,
        agent="claude-code",
        model="m",
        effort="high",
        agent_opts=("a=b", "version=1=2", "empty=", "effort=low"),
    ).agent
    assert (agent.name, agent.model) == ("claude-code", "m")
    assert agent.options == {"a": "b", "version": "1=2", "empty": "", "effort": "high"}
    assert _request(tmp_path, agent_opts=("effort=low",)).agent.options == {"effort": "low"}


def test_the_service_options_make_its_target(tmp_path: Path) -> None:
    assert _request(tmp_path).service is None
    service = _request(
        tmp_path,
        service_url="http://127.0.0.1:1",
        service_api="v1",
        dataset_name="dn",
        payload_schema="s.v1",
        payload_type="artifact",
        response_file="a.patch",
        service_scale=10.0,
    ).service
    assert service is not None
    assert (service.url, service.api, service.dataset) == ("http://127.0.0.1:1", "v1", "dn")
    assert (service.payload_schema, service.payload_type) == ("s.v1", "artifact")
    assert (service.response_file, service.scale) == ("a.patch", 10.0)


def test_a_service_dataset_alone_is_the_run(tmp_path: Path) -> None:
    request = _request(tmp_path, suite="", service_url="http://127.0.0.1:1", dataset_name="dn")
    assert request.tasks_from_service and request.suite == ""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"suite": ""}, "say what to run: --suite NAME, --selection-file FILE, --benchmarks-dir"),
        ({"suite": "", "service_url": "http://127.0.0.1:1"}, "say what to run"),
        ({"suite": "", "dataset_name": "dn"}, "say what to run"),
        ({"rerun": "failed"}, "--rerun and --from go together: --rerun failed --from RUN_ID"),
        ({"rerun_of": "r1"}, "--rerun and --from go together"),
        (
            {"suite": "", "dataset_file": "d.json"},
            "--dataset-file tasks are graded by a service: add --service-url",
        ),
    ],
)
def test_what_cannot_run_is_a_usage_error(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(click.UsageError) as refused:
        _request(tmp_path, **options)
    assert type(refused.value) is click.UsageError
    assert message in refused.value.format_message()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"agent_opts": ("plan",)}, "Invalid value for --agent-opt: 'plan' is not KEY=VALUE"),
        ({"agent_opts": ("=x",)}, "Invalid value for --agent-opt: '=x' is not KEY=VALUE"),
        ({"service_url": "ftp://x"}, "Invalid value for --service-url: "),
        (
            {"service_url": "http://127.0.0.1:1", "payload_type": "artifact"},
            "Invalid value for --service-url: ",
        ),
    ],
)
def test_a_bad_value_names_its_option(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(click.BadParameter) as refused:
        _request(tmp_path, **options)
    assert refused.value.format_message().startswith(message)


def test_the_command_passes_every_request_option_by_name() -> None:
    own = {"yes", "detach", "resume", "sandbox"}  # how this command starts it, not the request
    own |= {"config_file", "print_config"}  # the request from a file, or written as one
    named = {p.name for p in run.params if p.expose_value}
    assert named - own == {f.name for f in dataclasses.fields(RunOptions)}


def test_the_command_defaults_are_the_options_defaults() -> None:
    with run.make_context("run", []) as ctx:
        own = {"yes", "detach", "resume", "sandbox", "config_file", "print_config"}
        parsed = {k: v for k, v in ctx.params.items() if k not in own}
    assert RunOptions(**parsed) == RunOptions()
